"""Negative (safe): a configuration error raised before the all-reduces.

Upstream: megatron-core 0.16.1, megatron/core/optimizer/clip_grads.py (`count_zeros_fp32`).
Group: the data-parallel group (FSDP case) and the gradient-statistics group.
Why it looks divergent: a `raise ValueError` sits in front of the collectives.
Why it is safe: the condition is how the parameters are managed (Megatron
FSDP or not), which is the same on every rank, so either every rank raises
or none does.
"""

import torch
import torch.distributed as dist


def count_zeros(parameters, grad_stats_parallel_group):
    total = torch.zeros(1, dtype=torch.float, device="cuda")
    data_parallel_group = None
    use_megatron_fsdp = False
    for param in parameters:
        if getattr(param, "__fsdp_param__", False) and param.grad is not None:
            use_megatron_fsdp = True
            grad = param.grad._local_tensor
            total += grad.numel() - torch.count_nonzero(grad)
            continue
        if param.grad is not None:
            data_parallel_group = getattr(param.grad, "data_parallel_group", data_parallel_group)
            total += param.grad.numel() - torch.count_nonzero(param.grad)
    if use_megatron_fsdp and data_parallel_group is not None:
        raise ValueError("Megatron FSDP parameters must not carry a data-parallel group")
    if data_parallel_group:
        dist.all_reduce(total, group=data_parallel_group)
    dist.all_reduce(total, group=grad_stats_parallel_group)
    return total.item()
