"""Draft-model training under DDP: a micro-batch too short for one block is skipped per rank.

Upstream: NVIDIA-NeMo/Automodel, fix commit db0e7a26ff7a2e914a7368c6108024ea3a9041f3
          (PR #2468, "keep DFlash DDP ranks in lockstep on no-valid-anchor skips").
Group: world (the data-parallel gradient all-reduce inside the DDP backward).
Why ranks diverge: see buggy.py.
Variant: fixed -- each rank records whether its micro-batch had a block, the
flags are MIN-all-reduced, and every rank runs the backward only when all of
them have one (so all skip together).
"""

from contextlib import nullcontext

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from .anchors import BlockDraftTrainer, NoValidAnchorsError


def all_ranks_have_anchors(local_ok, distributed, device):
    if not distributed or not (dist.is_available() and dist.is_initialized()):
        return bool(local_ok)
    flag = torch.tensor([local_ok], dtype=torch.int32, device=device)
    dist.all_reduce(flag, op=dist.ReduceOp.MIN)
    return bool(flag.item())


class DraftRecipe:
    def setup(self, draft, block_size, world_size, device):
        trainer_module = BlockDraftTrainer(draft, block_size).to(device)
        if world_size > 1:
            trainer_module = DistributedDataParallel(trainer_module, device_ids=[device.index], broadcast_buffers=False)
        self.trainer_module = trainer_module
        self.device = device
        self.skipped = 0

    def train_epoch(self, loader, optimizer, accumulation_steps):
        pending = 0
        distributed = isinstance(self.trainer_module, DistributedDataParallel)
        for batch in loader:
            syncing = pending + 1 == accumulation_steps
            sync_ctx = nullcontext() if syncing else self.trainer_module.no_sync()
            with sync_ctx:
                local_ok = 1
                try:
                    loss = self.trainer_module(batch["input_ids"], batch["loss_mask"]) / accumulation_steps
                except NoValidAnchorsError:
                    local_ok = 0
                everyone_ok = all_ranks_have_anchors(local_ok, distributed, self.device)
                if everyone_ok:
                    loss.backward()
            if not everyone_ok:
                self.skipped += 1
                continue
            pending += 1
            if pending == accumulation_steps:
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
                pending = 0
