"""Full validation: each data-parallel rank loops over its own shard's batch count.

Upstream: NVIDIA/Megatron-LM, fix commit eee5c25f9aac7e4154cae7fff1c236061d35cca4
          ("Fixing hangs when using multiple datasets").
Group: dp (validation losses are all-reduced over the data-parallel group).
Why ranks diverge: with full validation the number of evaluation steps comes
from `len()` of this rank's validation loader.  A validation set that does
not divide evenly over the data-parallel ranks gives the ranks different
counts, so some ranks make more loss all-reduces than others.
Variant: buggy -- the evaluation trip count is this rank's loader length.
"""

import torch
import torch.distributed as dist

from megatron.core import mpu


def evaluate_full(forward_step, model, valid_dataloader):
    eval_iters = len(valid_dataloader)
    data_iterator = iter(valid_dataloader)
    total = torch.zeros(1, device="cuda")
    for _ in range(eval_iters):
        batch = next(data_iterator)
        loss = forward_step(batch, model)
        dist.all_reduce(loss, group=mpu.get_data_parallel_group())  # expect: CSL103
        total += loss
    return total / max(eval_iters, 1)
