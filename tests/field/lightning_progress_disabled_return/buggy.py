"""Progress bar: a disabled bar returns before reading the synced metrics.

Upstream: Lightning-AI/pytorch-lightning, fix commit a1a3700b827cd4329c9421d026e956383a0f3d95
          ("Fix progress bar deadlock on DDP metrics computation").
Group: world (metrics logged with sync_dist=True are all-reduced over the default group).
Why ranks diverge: the trainer disables the progress bar on every process but
global rank 0.  The update hook returns early when the bar is disabled, so
only rank 0 goes on to read the progress-bar metrics -- a read that
all-reduces the synced metrics (in another module) and waits for ranks that
never come.
Variant: buggy -- the enabled check comes before the metric read.
"""

from .results import LoggedResults


class MetricsBar:
    def __init__(self, results: LoggedResults):
        self.results = results
        self._disabled = False
        self._column = None

    def setup(self, trainer):
        if not trainer.is_global_zero:
            self._disabled = True

    @property
    def is_enabled(self):
        return not self._disabled

    def on_train_batch_end(self, trainer, batch_idx):
        if not self.is_enabled or self._column is None:
            return
        metrics = self.results.progress_bar_metrics()  # expect: CSL102
        self._column.update(metrics)
