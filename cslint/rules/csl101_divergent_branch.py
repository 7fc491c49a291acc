"""CSL101: a collective inside a branch whose condition differs between ranks."""

from __future__ import annotations

from ._phrasing import collective_phrase, describe_source, mode_suffix
from .base import Behaviour, Invalid, Rule, Scenario


class DivergentBranch(Rule):
    CODE = "CSL101"
    NAME = "divergent-branch"
    KIND = "branch"
    CONDITION_NOTE = "runs only when `{text}` holds"
    STRATEGIES = ("always-enter", "propagate", "consensus")
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
        Invalid(
            code="""\
import torch.distributed as dist

def share(t):
    if dist.get_rank() == 0:
        dist.all_reduce(t)
    return t
""",
            message=(
                "collective `dist.all_reduce` over all ranks runs only when `dist.get_rank() == 0`, "
                "which differs between ranks (source: `dist.get_rank()` (rank id))"
            ),
            fixed="""\
import torch.distributed as dist
import torch

def share(t):
    branch_taken = False
    if dist.get_rank() == 0:
        branch_taken = True
    dist.all_reduce(t if branch_taken else torch.zeros_like(t))
    return t
""",
            label="safe",
            behaviour=Behaviour(
                call="share(t)", observe="t.tolist()",
                scenarios=(Scenario("t = torch.full((3,), float(rank + 1))", takes=(0,)),),
            ),
        ),
        Invalid(
            code="""\
import torch.distributed as dist

def track_peak(peak, fresh):
    if fresh[dist.get_rank()]:
        dist.all_reduce(peak, op=dist.ReduceOp.MAX)
    return peak
""",
            message=(
                "collective `dist.all_reduce` over all ranks runs only when `fresh[dist.get_rank()]`, "
                "which differs between ranks (source: `dist.get_rank()` (rank id))"
            ),
            fixed="""\
import torch.distributed as dist
import torch

def track_peak(peak, fresh):
    branch_taken = False
    if fresh[dist.get_rank()]:
        branch_taken = True
    dist.all_reduce(peak if branch_taken else torch.full_like(peak, float('-inf') if peak.is_floating_point() else torch.iinfo(peak.dtype).min), op=dist.ReduceOp.MAX)
    return peak
""",
            label="safe",
            behaviour=Behaviour(
                call="track_peak(peak, fresh)", observe="peak.tolist()",
                scenarios=(
                    Scenario("peak = torch.tensor([2.0 * rank - 5.0, 7.0 - rank]); fresh = [True, False]", takes=(0,)),
                    Scenario("peak = torch.tensor([2.0 * rank - 5.0, 7.0 - rank]); fresh = [False, True]", takes=(1,)),
                    Scenario("peak = torch.tensor([2.0 * rank - 5.0, 7.0 - rank]); fresh = [True, True]",
                             takes=(0, 1)),
                    Scenario("peak = torch.tensor([2.0 * rank - 5.0, 7.0 - rank]); fresh = [False, False]", takes=()),
                    Scenario("peak = torch.tensor([3 * rank - 4, 9 - rank]); fresh = [False, True]", takes=(1,)),
                ),
            ),
        ),
        Invalid(
            code="""\
import torch.distributed as dist

def save(t):
    if dist.get_rank() == 0:
        dist.barrier()
""",
            message=(
                "collective `dist.barrier` over all ranks runs only when `dist.get_rank() == 0`, which "
                "differs between ranks (source: `dist.get_rank()` (rank id))"
            ),
            fixed="""\
import torch.distributed as dist

def save(t):
    if dist.get_rank() == 0:
        pass
    dist.barrier()
""",
            label="safe",
            behaviour=Behaviour(call="save(None)", observe="result", scenarios=(Scenario("", takes=(0,)),)),
        ),
        Invalid(
            code="""\
import torch.distributed as dist

def step(t):
    ok = dist.get_rank() % 2 == 0
    ok and dist.all_reduce(t)
""",
            message=(
                "collective `dist.all_reduce` over all ranks runs only when `ok`, which differs between "
                "ranks (source: `dist.get_rank()` (rank id))"
            ),
            refused=(
                "the collective is reached inside an `and`/`or` operand; write it as an `if` statement "
                "to fix it automatically"
            ),
        ),
        Invalid(
            code="""\
import time
import torch.distributed as dist

def step(t, deadline):
    return dist.all_reduce(t) if time.time() < deadline else None
""",
            message=(
                "collective `dist.all_reduce` over all ranks runs only when `time.time() < deadline`, "
                "which differs between ranks (source: `time.time()` (wall clock))"
            ),
            refused=(
                "the collective is reached inside a conditional expression; write it as an `if` "
                "statement to fix it automatically"
            ),
        ),
        Invalid(
            code="""\
from mpi4py import MPI

comm = MPI.COMM_WORLD

def report(value):
    if comm.Get_rank() < 2:
        return comm.allreduce(value)
    return value
""",
            message=(
                "collective `comm.allreduce` over all ranks runs only when `comm.Get_rank() < 2`, which "
                "differs between ranks (source: `comm.Get_rank()` (rank id))"
            ),
            fixed="""\
from mpi4py import MPI

comm = MPI.COMM_WORLD

def report(value):
    if comm.allreduce(bool(comm.Get_rank() < 2), op=MPI.LOR):
        return comm.allreduce(value)
    return value
""",
            label="unsafe",
        ),
    ]

    #: the part of the wording for a collective in the arm of a loop's only exit
    #: (``analysis/exitarms.py``): the test decides on which pass a rank runs it
    LEAVING_ARM = "the ranks that take this arm run it and leave the loop, while the others go on to its next pass"

    #: the chain's wording for a collective whose group argument each rank chooses
    #: (``Cond.statement`` "group", ``analysis/guards.py``)
    GROUP_NOTE = "runs over the group `{text}` names, which each rank chooses"

    @classmethod
    def condition_note(cls, cond) -> str:
        if cond.statement == "group":
            return cls.GROUP_NOTE.format(text=cond.text)
        note = super().condition_note(cond)
        return f"{note}: {cls.LEAVING_ARM}" if cond.going_on_sites is not None else note

    @classmethod
    def message(cls, hazard) -> str:
        if hazard.cond.going_on_sites is not None:
            return (f"{collective_phrase(hazard)} runs only when `{hazard.cond.text}`, which differs between "
                    f"ranks: {cls.LEAVING_ARM} (source: {describe_source(hazard)}){mode_suffix(hazard)}")
        if hazard.cond.statement == "group":
            return (f"{collective_phrase(hazard)} is handed `{hazard.cond.text}`, a group that differs "
                    f"between ranks: a rank waits in the communicator of the group it holds, where a rank holding "
                    f"another never comes (source: {describe_source(hazard)}){mode_suffix(hazard)}")
        if hazard.cond.statement == "thread":
            return (f"{collective_phrase(hazard)} runs on a background thread (`{hazard.source.text}`), at a "
                    f"point of the parent communicator's traffic that each process's thread scheduling decides "
                    f"(source: {describe_source(hazard)}){mode_suffix(hazard)}")
        return (f"{collective_phrase(hazard)} runs only when `{hazard.cond.text}`, which differs between "
                f"ranks (source: {describe_source(hazard)}){mode_suffix(hazard)}")
