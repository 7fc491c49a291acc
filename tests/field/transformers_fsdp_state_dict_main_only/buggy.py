"""Saving a fully-sharded model: the state dict is taken on the main process only.

Upstream: huggingface/transformers PR #10596 ("Fairscale FSDP fix model save").
Group: world (the sharded model's `state_dict()` all-gathers the full parameters).
Why ranks diverge: with fairscale's fully-sharded wrapper, `state_dict()`
synchronises all ranks to rebuild the full weights.  The trainer saves on
the main process only, so rank 0 waits in the state-dict all-gather while
the other ranks go straight to the barrier.
Variant: buggy -- the state dict (a collective) is built inside the
main-process branch.
"""

import os

import torch
import torch.distributed as dist
from fairscale.nn.data_parallel import FullyShardedDataParallel


class ShardedTrainer:
    def __init__(self, module, args):
        self.model = FullyShardedDataParallel(module)
        self.args = args

    def is_world_process_zero(self):
        return dist.get_rank() == 0

    def _save(self, output_dir, state_dict=None):
        if state_dict is None:
            state_dict = self.model.state_dict()
        os.makedirs(output_dir, exist_ok=True)
        torch.save(state_dict, os.path.join(output_dir, "pytorch_model.bin"))

    def save_model(self, output_dir):
        if self.is_world_process_zero():
            self._save(output_dir)  # expect: CSL101
        if self.args.local_rank != -1:
            dist.barrier()
