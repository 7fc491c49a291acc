"""Negative (safe): a filesystem test on rank 0, broadcast, then a loop driven by the agreed value.

Upstream: Lightning-AI/pytorch-lightning, src/lightning/pytorch/callbacks/model_checkpoint.py
          at commit f0c243b8f3 (`ModelCheckpoint.file_exists`, used by the version-counter
          loop in `_get_metric_interpolated_filepath_name`).
Group: world (`strategy.broadcast` over the default group).
Why it looks divergent: `os.path.exists` is node-local and the `while` loop
that bumps the version number runs on its result.
Why it is safe: only rank 0's answer is used -- it is broadcast, so every
rank takes the same number of loop turns (one broadcast each).
"""

import os


class VersionedCheckpointNames:
    def __init__(self, strategy, template):
        self.strategy = strategy
        self.template = template

    def file_exists(self, path):
        exists = os.path.exists(path)
        return self.strategy.broadcast(exists)

    def next_free_name(self, step):
        version = 0
        path = self.template.format(step=step, version=version)
        while self.file_exists(path):
            version += 1
            path = self.template.format(step=step, version=version)
        return path
