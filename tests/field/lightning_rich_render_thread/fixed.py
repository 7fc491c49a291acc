"""Rich progress bar: the metrics column syncs logged metrics from rich's refresh thread.

Upstream: Lightning-AI/pytorch-lightning, fix commit 3668598196e0fbde25bf9d41ed4c50dea805692c
          (PR #10428, "Fix deadlocks for distributed training for RichProgressBar").
Group: world (metrics logged with sync_dist=True are all-reduced over the default group).
Why ranks diverge: see buggy.py.
Variant: fixed -- the metrics are computed on the main thread, in a training
hook every rank runs once per batch, and handed to the column; `render()`
only reads the cached values.
"""

import torch
import torch.distributed as dist
from rich.progress import Progress, ProgressColumn, TextColumn
from rich.text import Text


class SyncedMetrics:
    def __init__(self):
        self.values = {}

    def progress_bar_metrics(self):
        out = {}
        for name, value in self.values.items():
            reduced = value.clone()
            dist.all_reduce(reduced)
            out[name] = reduced.item() / dist.get_world_size()
        return out


class MetricsTextColumn(ProgressColumn):
    def __init__(self):
        self._metrics = {}
        super().__init__()

    def update(self, metrics):
        self._metrics = metrics

    def render(self, task):
        return Text(" ".join(f"{k}: {v:.3f}" for k, v in self._metrics.items()))


class RichBar:
    def __init__(self, results, refresh_rate=10):
        self.results = results
        self.column = MetricsTextColumn()
        self.progress = Progress(TextColumn("{task.description}"), self.column,
                                 auto_refresh=True, refresh_per_second=refresh_rate)

    def on_train_start(self):
        self.progress.start()
        self.task = self.progress.add_task("train", total=None)

    def on_train_batch_end(self):
        self.column.update(self.results.progress_bar_metrics())
        self.progress.update(self.task, advance=1)
