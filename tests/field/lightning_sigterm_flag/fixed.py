"""SIGTERM handling: the rank that received the signal leaves the training loop alone.

Upstream: Lightning-AI/pytorch-lightning, fix commit 4ba96a27e7be9e4d883970b99deed41896e1e46e
          (PR #20825, "Fix: Synchronize SIGTERM Handling in DDP to Prevent Deadlocks";
          reverted by 68499b96d0 and redone as 29eccf6b27 "Force SIGTERM broadcast at
          epoch/validation boundaries").
Group: world (the DDP training step's gradient all-reduce).
Why ranks diverge: see buggy.py.
Variant: fixed -- rank 0's flag is broadcast every batch and all ranks decide
from the broadcast value, so they leave the loop together.
"""

import signal

import torch
import torch.distributed as dist

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

    def _agreed_sigterm(self):
        flag = torch.tensor([int(self.connector.received_sigterm)], device="cuda")
        dist.broadcast(flag, src=0)
        return bool(flag.item())

    def run(self, loader):
        for batch in loader:
            if self._agreed_sigterm():
                dist.barrier()
                raise SIGTERMException()
            self.advance(batch)
