"""Negative (safe): a Python-object broadcast whose receivers stop on the broadcast size.

Upstream: sglang 0.5.23, srt/utils/common.py (`broadcast_pyobj`).
Group: the scheduler's TP CPU group.
Why it looks divergent: the source and the receivers take different arms,
and both the source (on `len(data) == 0`) and the receivers (on `size == 0`)
can return after the first broadcast.
Why it is safe: the receivers' early return tests the size they received
from the source, so it is taken exactly when the source took its own
empty-data arm: both sides issue one broadcast, or both issue two.
"""

import pickle

import numpy as np
import torch
import torch.distributed as dist


def broadcast_pyobj(data, rank, dist_group, src=0):
    if rank == src:
        if len(data) == 0:
            size = torch.tensor([0], dtype=torch.long)
            dist.broadcast(size, src=src, group=dist_group)
            return data
        payload = torch.ByteTensor(np.frombuffer(pickle.dumps(data), dtype=np.uint8))
        size = torch.tensor([payload.numel()], dtype=torch.long)
        dist.broadcast(size, src=src, group=dist_group)
        dist.broadcast(payload, src=src, group=dist_group)
        return data
    size = torch.tensor([0], dtype=torch.long)
    dist.broadcast(size, src=src, group=dist_group)
    if int(size.item()) == 0:
        return []
    payload = torch.empty(int(size.item()), dtype=torch.uint8)
    dist.broadcast(payload, src=src, group=dist_group)
    return pickle.loads(payload.numpy().tobytes())
