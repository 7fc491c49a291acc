"""Logged-metric results shared by both variants: reading them syncs across ranks."""

import torch.distributed as dist


class LoggedResults:
    def __init__(self):
        self.synced = {}

    def progress_bar_metrics(self):
        out = {}
        for name, value in self.synced.items():
            reduced = value.clone()
            dist.all_reduce(reduced)
            out[name] = reduced.item() / dist.get_world_size()
        return out
