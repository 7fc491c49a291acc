"""Training step: a rank whose loss is NaN skips the backward its peers all-reduce in.

Upstream: NVIDIA/NeMo, fix commit 715401b26dee5cf4a073717670f18df67dd62a4c
          ("Initial fix for hanging bug when NaN/inf loss is encountered").
Group: world (the data-parallel gradient all-reduce inside the DDP backward).
Why ranks diverge: the loss is computed on this rank's own batch.  When it is
NaN or inf on one rank, that rank raises or `continue`s to the next batch,
while the other ranks run the backward and wait in the DDP gradient
all-reduce.
Variant: buggy -- a per-rank loss check leaves the step before the backward.
"""

import logging

import torch
from torch.nn.parallel import DistributedDataParallel

log = logging.getLogger(__name__)


def train(module, optimizer, loader, stop_on_nan_loss, device_id):
    model = DistributedDataParallel(module, device_ids=[device_id])
    for batch in loader:
        loss = model(batch).mean()
        if torch.isnan(loss).any() or torch.isinf(loss).any():
            if stop_on_nan_loss:
                raise ValueError("loss is NaN or inf")
            log.warning("loss is NaN or inf, skipping the step")
            optimizer.zero_grad()
            continue
        loss.backward()  # expect: CSL102
        optimizer.step()
        optimizer.zero_grad()
