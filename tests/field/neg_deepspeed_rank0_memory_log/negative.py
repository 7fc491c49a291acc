"""Negative (safe): rank-0-only memory logging that returns early on the other ranks.

Upstream: DeepSpeed 0.19.8, deepspeed/runtime/utils.py (`see_memory_usage`), called
          throughout the ZeRO optimizers, e.g. stage_1_and_2.py.
Group: none reached (the logging function issues no collective).
Why it looks divergent: `if dist.is_initialized() and not dist.get_rank() == 0: return`
is a rank-local early exit inside code that runs between collectives.
Why it is safe: nothing after the return is a collective -- the function only
reads local memory counters and logs them; the caller's collectives are
outside it.
"""

import gc
import logging

import torch
import torch.distributed as dist

logger = logging.getLogger(__name__)


def see_memory_usage(message, force=False):
    if not force:
        return
    if dist.is_initialized() and not dist.get_rank() == 0:
        return
    gc.collect()
    logger.info(message)
    logger.info("MA %.2f GB  Max_MA %.2f GB", torch.cuda.memory_allocated() / 2**30,
                torch.cuda.max_memory_allocated() / 2**30)


def reduce_gradients(grads, dp_group):
    see_memory_usage("before gradient reduction", force=True)
    for grad in grads:
        dist.all_reduce(grad, group=dp_group)
    see_memory_usage("after gradient reduction", force=True)
