"""Async checkpoint saving: pending saves finalized (a collective) from teardown.

Upstream: NVIDIA/NeMo, fix commit 2bd6366e1125efa8f51677e41994fa50f8957ed2
          ("Avoid deadlock in teardown").
Group: world (finalizing an async save agrees on completion with an all-reduce).
Why ranks diverge: teardown also runs on a rank whose training step raised.
That rank blocks in the finalization all-reduce while the healthy ranks are
still inside a training-step collective (or are gone), so the failure turns
into a hang instead of an error.
Variant: buggy -- the blocking finalization is reached from the exception path.
"""

import torch
import torch.distributed as dist


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

    def teardown(self, trainer, *args):
        self.queue.finalize(blocking=True)  # expect: CSL104


def run(trainer, model, finalizer):
    try:
        trainer.fit(model)
    finally:
        finalizer.teardown(trainer)  # expect: CSL104
