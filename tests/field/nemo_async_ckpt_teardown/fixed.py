"""Async checkpoint saving: pending saves finalized (a collective) from teardown.

Upstream: NVIDIA/NeMo, fix commit 2bd6366e1125efa8f51677e41994fa50f8957ed2
          ("Avoid deadlock in teardown").
Group: world (finalizing an async save agrees on completion with an all-reduce).
Why ranks diverge: see buggy.py.
Variant: fixed -- the blocking finalization moves to the end of a successful
fit (reached by every rank); teardown only warns about unfinished saves.
"""

import logging

import torch
import torch.distributed as dist

log = logging.getLogger(__name__)


class AsyncSaveQueue:
    def __init__(self):
        self.pending = []

    def unfinalized(self):
        return len(self.pending)

    def finalize(self, blocking):
        done = torch.tensor([int(all(p.done() for p in self.pending))], device="cuda")
        dist.all_reduce(done, op=dist.ReduceOp.MIN)
        if done.item() or blocking:
            for p in self.pending:
                p.result()
            self.pending.clear()


class AsyncFinalizerCallback:
    def __init__(self, queue):
        self.queue = queue

    def on_train_batch_end(self, trainer, *args):
        self.queue.finalize(blocking=False)

    def on_train_end(self, trainer, *args):
        self.queue.finalize(blocking=True)

    def teardown(self, trainer, *args):
        if self.queue.unfinalized() > 0:
            log.warning("some asynchronous checkpoint saves may not be finalized")


def run(trainer, model, finalizer):
    try:
        trainer.fit(model)
        finalizer.on_train_end(trainer)
    finally:
        finalizer.teardown(trainer)
