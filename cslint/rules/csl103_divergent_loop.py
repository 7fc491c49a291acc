"""CSL103: a collective in a loop whose trip count differs between ranks."""

from __future__ import annotations

from ..presets import KIND_ITERATION_ORDER
from ._phrasing import collective_phrase, describe_source, mode_suffix
from .base import Invalid, Rule


class DivergentLoop(Rule):
    CODE = "CSL103"
    NAME = "divergent-loop"
    KIND = "loop"
    CONDITION_NOTE = "repeats once per element/iteration of `{text}`"
    STRATEGIES = ("consensus",)
    SUMMARY = "Collective inside a loop whose number of iterations can differ between ranks"
    DOC = """\
## What it does
Flags a collective (or a call that leads to one) inside a `for` loop over a
rank-local container, a `while` loop on a rank-local counter or condition,
or a comprehension over rank-local data; also a loop over a `set`, whose
order is each process's own.

## Why is this bad?
Ranks that iterate more often issue more collectives than the others; the
extra calls pair with nothing (or with an unrelated later collective) and the
job hangs or silently exchanges the wrong data.  A set of objects iterates
in the order of their hashes (their ids; a string's hash is salted per
process), so ranks that loop over the same set issue the per-element
collectives for different elements at the same step.

## Example
```python
import torch.distributed as dist

def sync(buckets):
    mine = [b for b in buckets if b.owner == dist.get_rank()]
    for bucket in mine:
        dist.all_reduce(bucket)
```

## Use instead
Agree on the trip count first (for example the maximum over the group) and
let ranks with fewer items contribute neutral values:
```python
import torch
import torch.distributed as dist

def sync(buckets, zeros):
    mine = [b for b in buckets if b.owner == dist.get_rank()]
    count = torch.tensor([len(mine)])
    dist.all_reduce(count, op=dist.ReduceOp.MAX)
    for i in range(int(count.item())):
        dist.all_reduce(mine[i] if i < len(mine) else zeros)
```
"""
    VALID = [
        """\
import torch.distributed as dist

def sync(buckets):
    for bucket in buckets:
        dist.all_reduce(bucket)
""",
        """\
import torch.distributed as dist

def ring(t):
    for step in range(dist.get_world_size() - 1):
        dist.all_reduce(t)
""",
        """\
import torch.distributed as dist

def broadcast_params(params, src):
    for p in sorted(set(params), key=lambda p: p.ds_id):
        dist.broadcast(p, src, group=p.process_group)
""",
    ]
    INVALID = [
        Invalid(
            code="""\
import torch.distributed as dist

def sync(buckets):
    mine = [b for b in buckets if b.owner == dist.get_rank()]
    for bucket in mine:
        dist.all_reduce(bucket)
""",
            message=(
                "collective `dist.all_reduce` over all ranks runs once per iteration of a loop over "
                "`mine`, whose trip count differs between ranks (source: `dist.get_rank()` (rank id))"
            ),
            refused=(
                "a `for` loop's trip count comes from its iterable; agreeing on it needs a hand-written "
                "fix (see `cslint explain CSL103`)"
            ),
        ),
        Invalid(
            code="""\
import random
import torch.distributed as dist

def spin(t):
    n = random.randint(1, 4)
    while n > 0:
        dist.all_reduce(t)
        n -= 1
""",
            message=(
                "collective `dist.all_reduce` over all ranks runs once per iteration of a loop over `n > "
                "0`, whose trip count differs between ranks (source: `random.randint()` (randomness))"
            ),
            refused=(
                "this API agrees through statements before the test, and a `while` test would not re-run "
                "them: agree at the end of the loop body by hand"
            ),
        ),
        Invalid(
            code="""\
import torch.distributed as dist

def gather_all(items):
    local = items[dist.get_rank()]
    return [dist.all_reduce(x) for x in local]
""",
            message=(
                "collective `dist.all_reduce` over all ranks runs once per iteration of a loop over "
                "`local`, whose trip count differs between ranks (source: `dist.get_rank()` (rank id))"
            ),
            refused=(
                "a `for` loop's trip count comes from its iterable; agreeing on it needs a hand-written "
                "fix (see `cslint explain CSL103`)"
            ),
        ),
        Invalid(
            code="""\
import torch.distributed as dist

def broadcast_params(params, src):
    for p in set(params):
        dist.broadcast(p, src, group=p.process_group)
""",
            message=(
                "collective `dist.broadcast` over the group `p.process_group` runs once per iteration of a "
                "loop over `set(params)`, whose order of elements differs between ranks (source: "
                "`set(params)` (per-process iteration order of a set))"
            ),
            refused=(
                "a `for` loop's trip count comes from its iterable; agreeing on it needs a hand-written "
                "fix (see `cslint explain CSL103`)"
            ),
        ),
    ]

    @classmethod
    def message(cls, hazard) -> str:
        if hazard.cond.statement == "thread":
            return (f"{collective_phrase(hazard)} runs each time a library's own thread calls "
                    f"`{hazard.source.text}`, as often and when that thread's timer says on each rank "
                    f"(source: {describe_source(hazard)}){mode_suffix(hazard)}")
        differs = "order of elements" if hazard.source.kind == KIND_ITERATION_ORDER else "trip count"
        return (f"{collective_phrase(hazard)} runs once per iteration of a loop over `{hazard.cond.text}`, "
                f"whose {differs} differs between ranks (source: {describe_source(hazard)})"
                f"{mode_suffix(hazard)}")
