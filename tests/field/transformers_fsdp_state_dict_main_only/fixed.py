"""Saving a fully-sharded model: the state dict is taken on the main process only.

Upstream: huggingface/transformers PR #10596 ("Fairscale FSDP fix model save").
Group: world (the sharded model's `state_dict()` all-gathers the full parameters).
Why ranks diverge: see buggy.py.
Variant: fixed -- every rank builds the state dict (joining the gather); only
the main process writes it.
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

    def _save(self, output_dir, state_dict):
        os.makedirs(output_dir, exist_ok=True)
        torch.save(state_dict, os.path.join(output_dir, "pytorch_model.bin"))

    def save_model(self, output_dir):
        state_dict = self.model.state_dict()
        if self.is_world_process_zero():
            self._save(output_dir, state_dict=state_dict)
        if self.args.local_rank != -1:
            dist.barrier()
