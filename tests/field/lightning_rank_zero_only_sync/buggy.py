"""Result collection sync: a metric logged on rank 0 only is still all-reduced.

Upstream: Lightning-AI/pytorch-lightning, fix commit 0d09d71e3d3680dec21c9bc184b41786e280b03b
          ("Fix hang on rank zero only").
Group: world (result metrics are synced over the default group).
Why ranks diverge: a user logs a value with `rank_zero_only=True` from a
block that runs on global rank 0 only.  The collection then holds an extra
metric on rank 0, and syncing every tensor metric makes rank 0 issue one
all-reduce more than the other ranks.
Variant: buggy -- every tensor metric in this rank's collection is synced.
"""

import torch.distributed as dist


class ResultMetric:
    def __init__(self, value, rank_zero_only):
        self.value = value
        self.rank_zero_only = rank_zero_only
        self.is_tensor = hasattr(value, "dtype")

    def sync(self):
        dist.all_reduce(self.value)


class ResultCollection(dict):
    def log(self, name, value, rank_zero_only=False):
        self[name] = ResultMetric(value, rank_zero_only)

    def sync(self):
        for metric in self.values():
            if metric.is_tensor:
                metric.sync()  # expect: CSL103


class Module:
    def __init__(self, results, global_rank):
        self.results = results
        self.global_rank = global_rank

    def training_step(self, loss, grad_norm):
        self.results.log("loss", loss)
        if self.global_rank == 0:
            self.results.log("grad_norm", grad_norm, rank_zero_only=True)
        self.results.sync()
