"""Training step: a rank whose loss is NaN skips the backward its peers all-reduce in.

Upstream: NVIDIA/NeMo, fix commit 715401b26dee5cf4a073717670f18df67dd62a4c
          ("Initial fix for hanging bug when NaN/inf loss is encountered").
Group: world (the data-parallel gradient all-reduce inside the DDP backward).
Why ranks diverge: see buggy.py.
Variant: fixed -- the rank only records the NaN and keeps stepping; at the
next evaluation point every rank all-gathers the flags and all of them stop
together.
"""

import logging

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

log = logging.getLogger(__name__)


def any_rank_saw_nan(saw_nan, world_size):
    flag = torch.tensor(int(saw_nan), device="cuda")
    flags = [torch.empty_like(flag) for _ in range(world_size)]
    dist.all_gather(flags, flag)
    return any(bool(f.item()) for f in flags)


def train(module, optimizer, loader, stop_on_nan_loss, device_id, eval_interval, world_size):
    model = DistributedDataParallel(module, device_ids=[device_id])
    saw_nan = False
    for step, batch in enumerate(loader):
        if step % eval_interval == 0 and any_rank_saw_nan(saw_nan, world_size):
            raise ValueError("terminating: a rank saw a NaN or inf loss")
        loss = model(batch).mean()
        if torch.isnan(loss).any() or torch.isinf(loss).any():
            if stop_on_nan_loss:
                saw_nan = True
            log.warning("loss is NaN or inf")
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
