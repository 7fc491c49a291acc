"""CSL101: a collective inside a branch whose condition differs between ranks."""

from __future__ import annotations

from ._phrasing import collective_phrase, describe_source, mode_suffix
from .base import Rule


class DivergentBranch(Rule):
    CODE = "CSL101"
    NAME = "divergent-branch"
    KIND = "branch"
    CONDITION_NOTE = "runs only when `{text}` holds"
    STRATEGIES = ("always-enter", "consensus")
    SUMMARY = "Collective called under a condition that can differ between ranks of its group"
    DOC = """\
## What it does
Flags a collective (or a call that leads to one) inside an `if`, a `match`
case, a short-circuit `and`/`or` operand or a conditional expression whose
condition depends on rank-local state: the rank id, a wall clock, randomness,
a per-rank queue, a flag set under such a condition.

## Why is this bad?
Every rank of a process group must issue the same collectives in the same
order. When the condition is true on some ranks and false on others, the
ranks that enter wait forever for the ones that skipped: the job hangs until
a watchdog kills it. Both branches issuing the same collective sequence is
fine and not flagged.

## Example
```python
import torch.distributed as dist

def maybe_sync(t, pending):
    if pending[dist.get_rank()]:
        dist.all_reduce(t)
```

## Use instead
Agree on the condition first (consensus), then branch on the agreed value:
```python
import torch
import torch.distributed as dist

def maybe_sync(t, pending):
    flag = torch.tensor([int(bool(pending[dist.get_rank()]))])
    dist.all_reduce(flag, op=dist.ReduceOp.MAX)
    if flag.item():
        dist.all_reduce(t)
```
"""
    VALID = [
        """\
import torch.distributed as dist

def sync(t):
    if dist.get_world_size() > 1:
        dist.all_reduce(t)
""",
        """\
import torch
import torch.distributed as dist

def maybe_sync(t, pending):
    flag = torch.tensor([len(pending) > dist.get_rank()])
    dist.all_reduce(flag)
    if flag.item():
        dist.all_reduce(t)
""",
        """\
import torch.distributed as dist

def share(t):
    if dist.get_rank() == 0:
        dist.broadcast(t, src=0)
    else:
        dist.broadcast(t, src=0)
""",
        """\
import torch.distributed as dist

def share(obj):
    payload = [obj if dist.get_rank() == 0 else None]
    dist.broadcast_object_list(payload, src=0)
    return payload[0]
""",
    ]
    INVALID = [
        """\
import torch.distributed as dist

def save(t):
    if dist.get_rank() == 0:
        dist.barrier()
""",
        """\
import torch.distributed as dist

def step(t):
    ok = dist.get_rank() % 2 == 0
    ok and dist.all_reduce(t)
""",
        """\
import time
import torch.distributed as dist

def step(t, deadline):
    return dist.all_reduce(t) if time.time() < deadline else None
""",
        """\
from mpi4py import MPI

comm = MPI.COMM_WORLD

def report(value):
    if comm.Get_rank() < 2:
        return comm.allreduce(value)
    return value
""",
    ]

    @classmethod
    def message(cls, hazard) -> str:
        return (f"{collective_phrase(hazard)} runs only when `{hazard.cond.text}`, which differs between "
                f"ranks (source: {describe_source(hazard)}){mode_suffix(hazard)}")
