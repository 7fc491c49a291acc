"""SIGTERM handling: the rank that received the signal leaves the training loop alone.

Upstream: Lightning-AI/pytorch-lightning, fix commit 4ba96a27e7be9e4d883970b99deed41896e1e46e
          (PR #20825, "Fix: Synchronize SIGTERM Handling in DDP to Prevent Deadlocks";
          reverted by 68499b96d0 and redone as 29eccf6b27 "Force SIGTERM broadcast at
          epoch/validation boundaries").
Group: world (the DDP training step's gradient all-reduce).
Why ranks diverge: the scheduler's SIGTERM reaches the processes at different
moments (or reaches only some of them).  The handler sets a flag on the
receiving process; at the end of the batch that process raises and leaves
the loop, while the others start the next step and wait in its all-reduce.
Variant: buggy -- each rank acts on its own signal flag.
"""

import signal

from .steps import DDPStrategy


class SIGTERMException(SystemExit):
    pass


class SignalConnector:
    def __init__(self):
        self.received_sigterm = False

    def register(self):
        signal.signal(signal.SIGTERM, self._on_sigterm)

    def _on_sigterm(self, signum, frame):
        self.received_sigterm = True


class EpochLoop:
    def __init__(self, connector, strategy: DDPStrategy, model, optimizer):
        self.connector = connector
        self.strategy = strategy
        self.model = model
        self.optimizer = optimizer

    def advance(self, batch):
        loss = self.model(batch).mean()
        loss.backward()
        self.strategy.reduce_gradients(self.model)
        self.optimizer.step()
        self.optimizer.zero_grad()

    def run(self, loader):
        for batch in loader:
            self.advance(batch)  # expect: CSL102
            if self.connector.received_sigterm:
                raise SIGTERMException()
