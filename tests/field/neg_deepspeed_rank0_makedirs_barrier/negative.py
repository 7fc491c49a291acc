"""Negative (safe): rank 0 creates the checkpoint directory, then every rank meets at a barrier.

Upstream: microsoft/DeepSpeed, commit b891ec2af5423c4f57370841ab950fe288f25547
          (PR #4536, "engine.py - save_checkpoint: only rank-0 should create the save dir").
Group: world.
Why it looks divergent: a filesystem operation under `rank == 0`.
Why it is safe: the branch holds no collective; the barrier after it is
unconditional, so every rank reaches it once.
"""

import os

import torch.distributed as dist


class CheckpointSaver:
    def __init__(self, checkpoint_engine):
        self.checkpoint_engine = checkpoint_engine

    def prepare_save_dir(self, save_dir):
        rank = dist.get_rank()
        if rank == 0:
            self.checkpoint_engine.makedirs(save_dir, exist_ok=True)
        dist.barrier()
        return os.path.join(save_dir, "latest")
