"""Rich progress bar: the metrics column syncs logged metrics from rich's refresh thread.

Upstream: Lightning-AI/pytorch-lightning, fix commit 3668598196e0fbde25bf9d41ed4c50dea805692c
          (PR #10428, "Fix deadlocks for distributed training for RichProgressBar").
Group: world (metrics logged with sync_dist=True are all-reduced over the default group).
Why ranks diverge: a rich `Progress` with auto-refresh calls every column's
`render()` from its own refresh thread, several times per second, at moments
set by each process's timer.  Rendering asks the trainer for the progress-bar
metrics, which reduces the synced metrics across ranks: the all-reduces come
from a background thread, in numbers and at points that differ per rank.
Variant: buggy -- `render()` (refresh thread) reaches the metric sync.
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
    def __init__(self, results):
        self._results = results
        super().__init__()

    def render(self, task):
        metrics = self._results.progress_bar_metrics()  # expect: CSL103
        return Text(" ".join(f"{k}: {v:.3f}" for k, v in metrics.items()))


class RichBar:
    def __init__(self, results, refresh_rate=10):
        self.progress = Progress(TextColumn("{task.description}"), MetricsTextColumn(results),
                                 auto_refresh=True, refresh_per_second=refresh_rate)

    def on_train_start(self):
        self.progress.start()
        self.task = self.progress.add_task("train", total=None)

    def on_train_batch_end(self):
        self.progress.update(self.task, advance=1)
