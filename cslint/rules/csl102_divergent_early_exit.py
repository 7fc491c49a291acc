"""CSL102: a rank-local early exit before a collective."""

from __future__ import annotations

from ._phrasing import collective_phrase, describe_source, mode_suffix
from .base import Behaviour, Invalid, Rule, Scenario


class DivergentEarlyExit(Rule):
    CODE = "CSL102"
    NAME = "divergent-early-exit"
    KIND = "early-exit"
    CONDITION_NOTE = "is skipped when `{text}` sends a rank out early via `{exit}`"
    STRATEGIES = ("always-enter", "propagate", "consensus")
    SUMMARY = "Rank-local return/continue/break/exit/raise/assert skips a later collective on some ranks"
    DOC = """\
## What it does
Flags a collective (or a call that leads to one) that follows an early exit
(`return`, `continue`, `break`, `sys.exit()`/`os._exit()`, or a
`raise`/`assert` that a surrounding `try` handles) taken on a condition that
depends on rank-local state. An unhandled `raise` or `assert` is treated as
an error check: when it fires the process fails and the launcher tears the
job down, which is a crash rather than a hang. `sys.exit(0)` is different: a
rank that exits cleanly fails nothing, and the others wait for it.  With
`unhandled-exceptions = "hang"` (set in `[tool.cslint]`, or chosen by a
preset: `tensorrt_llm`'s MPI-launched executors) nothing tears the job down:
an unhandled `raise` or failing `assert` on a rank-local condition leaves
those ranks while the others wait in the collective, so it is flagged like
`return`, and the message says that this case applies.

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
        Invalid(
            code="""\
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
            message=(
                "collective `dist.all_reduce` over all ranks is skipped on ranks that take `return` when "
                "`not self.pending`, which differs between ranks (source: `dist.get_rank()` (rank id))"
            ),
            fixed="""\
import torch.distributed as dist
import torch

class Worker:
    def __init__(self):
        self.pending = []
        if dist.get_rank() == 0:
            self.pending.append(1)

    def flush(self, t):
        exit_early = False
        if not self.pending:
            exit_early = True
        dist.all_reduce(t if not exit_early else torch.zeros_like(t))
        if exit_early:
            return
""",
            label="safe",
            behaviour=Behaviour(
                call="Worker().flush(t)", observe="t.tolist()",
                scenarios=(Scenario("t = torch.arange(3.0) + rank", takes=(0,)),),
            ),
        ),
        Invalid(
            code="""\
import time
import torch.distributed as dist

def train(t, start, budget):
    for step in range(10):
        if time.time() - start > budget:
            break
        dist.all_reduce(t)
""",
            message=(
                "collective `dist.all_reduce` over all ranks is skipped on ranks that take `break` when "
                "`time.time() - start > budget`, which differs between ranks (source: `time.time()` "
                "(wall clock))"
            ),
            fixed="""\
import time
import torch.distributed as dist
import torch

def train(t, start, budget):
    for step in range(10):
        agreed_flag = torch.tensor([1 if time.time() - start > budget else 0], device=t.device)
        dist.all_reduce(agreed_flag, op=dist.ReduceOp.MAX)
        if bool(agreed_flag.item()):
            break
        dist.all_reduce(t)
""",
            label="unsafe",
        ),
        Invalid(
            code="""\
import torch.distributed as dist

def check(t, batch):
    try:
        if dist.get_rank() == 1 and not batch:
            raise RuntimeError("rank 1 has nothing to send")
        dist.all_reduce(t)
    except RuntimeError:
        return None
    return t
""",
            message=(
                "collective `dist.all_reduce` over all ranks is skipped on ranks that take `raise "
                "RuntimeError('rank 1 has nothing to send')` when `dist.get_rank() == 1 and (not "
                "batch)`, which differs between ranks (source: `dist.get_rank()` (rank id))"
            ),
            fixed="""\
import torch.distributed as dist
import torch

def check(t, batch):
    try:
        exit_early = False
        early_error = None
        if dist.get_rank() == 1 and not batch:
            exit_early = True
            early_error = RuntimeError("rank 1 has nothing to send")
        dist.all_reduce(t if not exit_early else torch.zeros_like(t))
        if exit_early:
            raise early_error
    except RuntimeError:
        return None
    return t
""",
            label="safe",
            behaviour=Behaviour(
                call="check(t, batch)", observe="(None if result is None else result.tolist(), t.tolist())",
                scenarios=(
                    Scenario("t = torch.tensor([1.0, 2.0]) * (rank + 1); batch = []", takes=(0,)),
                    Scenario("t = torch.tensor([1.0, 2.0]) * (rank + 1); batch = [1]", takes=(0, 1)),
                ),
            ),
        ),
        Invalid(
            code="""\
import os
import sys
from mpi4py import MPI

def main(comm=MPI.COMM_WORLD):
    if not os.path.exists("/data/shard.bin"):   # this node's disk
        sys.exit(0)
    comm.Barrier()
""",
            message=(
                "collective `comm.Barrier` over all ranks is skipped on ranks that take `sys.exit(0)` "
                "when `not os.path.exists('/data/shard.bin')`, which differs between ranks (source: "
                "`os.path.exists()` (local filesystem view))"
            ),
            fixed="""\
import os
import sys
from mpi4py import MPI

def main(comm=MPI.COMM_WORLD):
    if comm.allreduce(bool(not os.path.exists("/data/shard.bin")), op=MPI.LOR):   # this node's disk
        sys.exit(0)
    comm.Barrier()
""",
            label="unsafe",
        ),
        Invalid(
            code="""\
from mpi4py import MPI

def total_work(comm, items):
    if comm.Get_rank() == 0 and not items:
        return 0
    return comm.allreduce(len(items))
""",
            message=(
                "collective `comm.allreduce` over all ranks is skipped on ranks that take `return 0` "
                "when `comm.Get_rank() == 0 and (not items)`, which differs between ranks (source: "
                "`comm.Get_rank()` (rank id))"
            ),
            fixed="""\
from mpi4py import MPI

def total_work(comm, items):
    exit_early = False
    early_result = None
    if comm.Get_rank() == 0 and not items:
        exit_early = True
        early_result = 0
    gathered = comm.allreduce(len(items) if not exit_early else 0)
    if exit_early:
        return early_result
    return gathered
""",
            label="safe",
            behaviour=Behaviour(
                call="total_work(comm, items)", observe="result", backend="mpi",
                scenarios=(
                    Scenario("items = [] if rank == 0 else [1, 2, 3]", takes=(1,)),
                    Scenario("items = [1] * (rank + 1)", takes=(0, 1)),
                ),
            ),
        ),
    ]

    @classmethod
    def message(cls, hazard) -> str:
        exit_text = hazard.cond.exit_text or "an early exit"
        case = cls.UNHANDLED + "; " if hazard.cond.unhandled else ""
        # an assert leaves where its test fails: its own text says when
        taken = (f"where `{exit_text}` fails" if hazard.cond.statement == "assert"
                 else f"that take `{exit_text}` when `{hazard.cond.text}`")
        return (f"{collective_phrase(hazard)} is skipped on ranks {taken}, which differs between ranks "
                f"({case}source: {describe_source(hazard)}){mode_suffix(hazard)}")

    #: The case of a ``raise`` or failing ``assert`` nothing catches, an exit only under "hang".
    UNHANDLED = ('unhandled-exceptions = "hang": the exception leaves the ranks that raise it, '
                 "and the others wait in the collective")
