"""Sequential checkpoint-directory creation: a local filesystem error leaves the barrier loop early.

Upstream: microsoft/DeepSpeed, fix commit 7cb22883e8b41605466300d9db9239dcc03704e6
          (PR #297, "Avoid deadlock for unsynchronized non-zero checkpointing").
Group: world (`dist.barrier()` on the default group, once per rank index).
Why ranks diverge: the ranks create their checkpoint directories one after
another, each turn closed by a barrier.  When `makedirs` fails on one rank
(its local filesystem: permissions, quota, a stale mount) that rank returns
from inside the loop and skips the remaining barriers the other ranks enter.
Variant: buggy -- `return False` inside the barrier loop.
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

    def create_zero_checkpoint_dirs(self, save_dir, tag):
        for turn in range(self.world_size):
            if turn == self.global_rank:
                try:
                    os.makedirs(os.path.dirname(self._zero_ckpt_name(save_dir, tag)), exist_ok=True)
                except OSError:
                    logger.error("failed to create the checkpoint directory under %s", save_dir)
                    return False
            dist.barrier()  # expect: CSL104
        return True
