"""CSL102: a rank-local early exit before a collective."""

from __future__ import annotations

from ._phrasing import collective_phrase, describe_source, mode_suffix
from .base import Rule


class DivergentEarlyExit(Rule):
    CODE = "CSL102"
    NAME = "divergent-early-exit"
    KIND = "early-exit"
    CONDITION_NOTE = "is skipped when `{text}` sends a rank out early via `{exit}`"
    STRATEGIES = ("always-enter", "consensus")
    SUMMARY = "Rank-local return/continue/break/exit/raise/assert skips a later collective on some ranks"
    DOC = """\
## What it does
Flags a collective (or a call that leads to one) that follows an early exit
(`return`, `continue`, `break`, `sys.exit()`/`os._exit()`, or a
`raise`/`assert` that a surrounding `try` handles) taken on a condition that
depends on rank-local state. An unhandled `raise` or `assert` is treated as
an error check: when it fires the process fails and the launcher tears the
job down, which is a crash rather than a hang. `sys.exit(0)` is different: a
rank that exits cleanly fails nothing, and the others wait for it.

## Why is this bad?
The ranks that leave early never reach the collective the other ranks are
waiting in, so the group hangs. In an event loop a rank-local `continue`
makes ranks arrive at the next collective on different iterations, pairing
unrelated calls or deadlocking.

## Example
```python
import torch.distributed as dist

class Worker:
    def flush(self, t):
        if not self.pending:      # per-rank queue
            return
        dist.all_reduce(t)
```

## Use instead
Always enter the collective; a rank with nothing to contribute sends a
neutral value and everyone decides from the gathered result:
```python
import torch
import torch.distributed as dist

class Worker:
    def flush(self, t):
        count = torch.tensor([len(self.pending)])
        dist.all_reduce(count)
        if count.item() == 0:
            return
        dist.all_reduce(t)
```
"""
    VALID = [
        """\
import torch
import torch.distributed as dist

class Worker:
    def __init__(self):
        self.pending = []
        if dist.get_rank() == 0:
            self.pending.append(1)

    def flush(self, t):
        count = torch.tensor([len(self.pending)])
        dist.all_reduce(count)
        if count.item() == 0:
            return
        dist.all_reduce(t)
""",
        """\
import torch.distributed as dist

def sync(t, steps):
    if steps <= 0:
        return
    dist.all_reduce(t)
""",
    ]
    INVALID = [
        """\
import torch.distributed as dist

class Worker:
    def __init__(self):
        self.pending = []
        if dist.get_rank() == 0:
            self.pending.append(1)

    def flush(self, t):
        if not self.pending:
            return
        dist.all_reduce(t)
""",
        """\
import time
import torch.distributed as dist

def train(t, start, budget):
    for step in range(10):
        if time.time() - start > budget:
            break
        dist.all_reduce(t)
""",
        """\
import torch.distributed as dist

def check(t, batch):
    try:
        if dist.get_rank() == 3 and not batch:
            raise RuntimeError("rank 3 has nothing to send")
        dist.barrier()
    except RuntimeError:
        return None
""",
        """\
import os
import sys
from mpi4py import MPI

def main(comm=MPI.COMM_WORLD):
    if not os.path.exists("/data/shard.bin"):   # this node's disk
        sys.exit(0)
    comm.Barrier()
""",
    ]

    @classmethod
    def message(cls, hazard) -> str:
        exit_text = hazard.cond.exit_text or "an early exit"
        return (f"{collective_phrase(hazard)} is skipped on ranks that take `{exit_text}` when "
                f"`{hazard.cond.text}`, which differs between ranks (source: {describe_source(hazard)})"
                f"{mode_suffix(hazard)}")
