"""Epoch-end metric sync: one all-reduce per logged key, keys logged per rank.

Upstream: Lightning-AI/pytorch-lightning, fix commit e1d6a53e2c8edfaaf1318025dcc99b780ba75f63
          (issue #21409, "Add validation for consistent metric keys when using sync_dist=True").
Group: world (sync_dist metrics are all-reduced over the default group).
Why ranks diverge: see buggy.py.
Variant: fixed -- before reducing, the ranks exchange their synced key lists;
when they differ every rank raises the same error instead of hanging.
"""

import torch
import torch.distributed as dist
from lightning.pytorch import LightningModule


class EpochResults:
    def __init__(self):
        self.metrics = {}

    def log(self, name, value, sync_dist=False):
        entry = self.metrics.setdefault(name, {"total": torch.zeros(1, device="cuda"), "sync": sync_dist})
        entry["total"] += value

    def compute(self):
        synced = sorted(name for name, entry in self.metrics.items() if entry["sync"])
        every_rank = [None] * dist.get_world_size()
        dist.all_gather_object(every_rank, synced)
        if any(keys != every_rank[0] for keys in every_rank):
            raise RuntimeError(f"ranks logged different sync_dist metric keys: {every_rank}")
        out = {}
        for name in every_rank[0]:
            dist.all_reduce(self.metrics[name]["total"])
            out[name] = self.metrics[name]["total"].item()
        return out


class ClassifierModule(LightningModule):
    def __init__(self, results):
        self.results = results

    def validation_step(self, batch):
        loss = batch["logits"].float().mean()
        self.results.log("val_loss", loss, sync_dist=True)
        labelled = batch["labels"] >= 0
        if labelled.any():
            acc = (batch["logits"].argmax(-1)[labelled] == batch["labels"][labelled]).float().mean()
            self.results.log("val_acc", acc, sync_dist=True)

    def on_validation_epoch_end(self):
        return self.results.compute()
