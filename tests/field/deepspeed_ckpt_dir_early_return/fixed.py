"""Sequential checkpoint-directory creation: a local filesystem error leaves the barrier loop early.

Upstream: microsoft/DeepSpeed, fix commit 7cb22883e8b41605466300d9db9239dcc03704e6
          (PR #297, "Avoid deadlock for unsynchronized non-zero checkpointing").
Group: world (`dist.barrier()` on the default group, once per rank index).
Why ranks diverge: see buggy.py.
Variant: fixed -- the failure is recorded and the rank keeps taking part in
every turn's barrier; the result is returned after the loop.
"""

import logging
import os

import torch.distributed as dist

logger = logging.getLogger(__name__)


class CheckpointWriter:
    def __init__(self, world_size, global_rank):
        self.world_size = world_size
        self.global_rank = global_rank

    def _zero_ckpt_name(self, save_dir, tag):
        return os.path.join(save_dir, str(tag), f"zero_pp_rank_{self.global_rank}_optim_states.pt")

    def _create_dir(self, save_dir, tag):
        try:
            os.makedirs(os.path.dirname(self._zero_ckpt_name(save_dir, tag)), exist_ok=True)
        except OSError:
            logger.error("failed to create the checkpoint directory under %s", save_dir)
            return False
        return True

    def create_zero_checkpoint_dirs(self, save_dir, tag):
        success = True
        for turn in range(self.world_size):
            if turn == self.global_rank:
                success = self._create_dir(save_dir, tag)
            dist.barrier()
        return success
