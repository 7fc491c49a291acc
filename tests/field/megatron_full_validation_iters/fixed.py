"""Full validation: each data-parallel rank loops over its own shard's batch count.

Upstream: NVIDIA/Megatron-LM, fix commit eee5c25f9aac7e4154cae7fff1c236061d35cca4
          ("Fixing hangs when using multiple datasets").
Group: dp (validation losses are all-reduced over the data-parallel group).
Why ranks diverge: see buggy.py.
Variant: fixed -- the step count is the maximum of the local lengths over the
data-parallel group, and the loader is cycled, so every rank makes the same
number of all-reduces.
"""

import itertools

import torch
import torch.distributed as dist

from megatron.core import mpu


def agreed_eval_iters(valid_dataloader):
    local = torch.tensor([len(valid_dataloader)], dtype=torch.long, device="cuda")
    dist.all_reduce(local, op=dist.ReduceOp.MAX, group=mpu.get_data_parallel_group())
    return int(local.item())


def evaluate_full(forward_step, model, valid_dataloader):
    eval_iters = agreed_eval_iters(valid_dataloader)
    data_iterator = itertools.cycle(valid_dataloader)
    total = torch.zeros(1, device="cuda")
    for _ in range(eval_iters):
        batch = next(data_iterator)
        loss = forward_step(batch, model)
        dist.all_reduce(loss, group=mpu.get_data_parallel_group())
        total += loss
    return total / max(eval_iters, 1)
