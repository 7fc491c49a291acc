"""Draft-model training under DDP: a micro-batch too short for one block is skipped per rank.

Upstream: NVIDIA-NeMo/Automodel, fix commit db0e7a26ff7a2e914a7368c6108024ea3a9041f3
          (PR #2468, "keep DFlash DDP ranks in lockstep on no-valid-anchor skips").
Group: world (the data-parallel gradient all-reduce inside the DDP backward).
Why ranks diverge: the trainer module raises `NoValidAnchorsError` when every
sample of this rank's micro-batch is too short to form a block.  The loop
catches it and goes on to the next micro-batch without a backward, so that
rank skips the gradient all-reduce its peers wait in (or, short of a hang,
its accumulation window drifts from theirs).
Variant: buggy -- the per-rank error skips the backward on the raising rank only.
"""

from contextlib import nullcontext

from torch.nn.parallel import DistributedDataParallel

from .anchors import BlockDraftTrainer, NoValidAnchorsError


class DraftRecipe:
    def setup(self, draft, block_size, world_size, device):
        trainer_module = BlockDraftTrainer(draft, block_size).to(device)
        if world_size > 1:
            trainer_module = DistributedDataParallel(trainer_module, device_ids=[device.index], broadcast_buffers=False)
        self.trainer_module = trainer_module
        self.skipped = 0

    def train_epoch(self, loader, optimizer, accumulation_steps):
        pending = 0
        for batch in loader:
            syncing = pending + 1 == accumulation_steps
            sync_ctx = nullcontext() if syncing else self.trainer_module.no_sync()
            try:
                with sync_ctx:
                    loss = self.trainer_module(batch["input_ids"], batch["loss_mask"]) / accumulation_steps
                    loss.backward()  # expect: CSL104
            except NoValidAnchorsError:
                self.skipped += 1
                continue
            pending += 1
            if pending == accumulation_steps:
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
                pending = 0
