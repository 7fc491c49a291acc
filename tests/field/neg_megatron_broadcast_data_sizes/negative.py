"""Negative (safe): TP rank 0 fills the sizes, every TP rank joins the broadcast.

Upstream: megatron-core 0.16.1, megatron/core/tensor_parallel/data.py
          (`_build_key_size_numel_dictionaries` and `broadcast_data`).
Group: tp.
Why it looks divergent: the sizes are computed from data that only TP rank 0
holds, under `tp_group.rank() == 0`.
Why it is safe: the rank test guards local work only; the broadcast that
follows is unconditional, and what the other ranks do next depends on the
broadcast result, which is the same on every rank.
"""

import torch
import torch.distributed as dist

MAX_DATA_DIM = 5


def build_sizes(keys, data, tp_group):
    sizes = [0 for _ in range(MAX_DATA_DIM) for _ in keys]
    if tp_group.rank() == 0:
        offset = 0
        for key in keys:
            for i, s in enumerate(data[key].size()):
                sizes[i + offset] = s
            offset += MAX_DATA_DIM
    sizes_cuda = torch.tensor(sizes, dtype=torch.long, device="cuda")
    src = dist.get_process_group_ranks(tp_group)[0]
    dist.broadcast(sizes_cuda, src, group=tp_group)
    return sizes_cuda.cpu()


def broadcast_data(keys, data, dtype, tp_group):
    sizes = build_sizes(keys, data, tp_group)
    total = int(sum(int(sizes[i]) for i in range(len(sizes)) if int(sizes[i]) > 0))
    if tp_group.rank() == 0:
        flat = torch.cat([data[key].contiguous().view(-1) for key in keys]).cuda()
    else:
        flat = torch.empty(total, dtype=dtype, device="cuda")
    dist.broadcast(flat, dist.get_process_group_ranks(tp_group)[0], group=tp_group)
    return flat
