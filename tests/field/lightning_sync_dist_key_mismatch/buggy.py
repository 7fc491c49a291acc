"""Epoch-end metric sync: one all-reduce per logged key, keys logged per rank.

Upstream: Lightning-AI/pytorch-lightning, fix commit e1d6a53e2c8edfaaf1318025dcc99b780ba75f63
          (issue #21409, "Add validation for consistent metric keys when using sync_dist=True").
Group: world (sync_dist metrics are all-reduced over the default group).
Why ranks diverge: `self.log(name, value, sync_dist=True)` adds the key to the
results collection the first time a rank logs it.  A step that logs a key
only for some batches (here: only when the batch holds labelled samples)
leaves the ranks with different key sets, and the epoch-end loop makes a
different number of all-reduces on each rank.
Variant: buggy -- the reduction iterates over this rank's logged keys.
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
        out = {}
        for name, entry in self.metrics.items():
            if entry["sync"]:
                dist.all_reduce(entry["total"])  # expect: CSL103
            out[name] = entry["total"].item()
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
