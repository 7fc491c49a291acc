"""CSL104: a collective on a path that a rank-local exception changes."""

from __future__ import annotations

from ._phrasing import collective_phrase, describe_source, mode_suffix
from .base import Invalid, Rule


class DivergentException(Rule):
    CODE = "CSL104"
    NAME = "divergent-exception"
    KIND = "exception"
    CONDITION_NOTE = "depends on whether {text}"
    NO_FIX = ("exception paths are not rewritten automatically: agree on the local work's success "
              "before the collective (see `cslint explain CSL104`)")
    SUMMARY = "Collective skipped or only reached when local work raises an exception that is handled"
    DOC = """\
## What it does
Flags a collective in a `try` body after local work whose exception is
caught by a handler that does not issue the same collectives, and a
collective inside such an `except` handler.

## Why is this bad?
Exceptions from local work (I/O, a full cache, a bad request) happen on one
rank at a time. The rank that raises jumps to the handler and skips the
collective the others are blocked in, or calls one in the handler that the
others never call. A handler that re-raises is not flagged: the process
ends and the launcher tears the job down -- unless a `try` around it in
its function, or a caller in the same module, catches what it raises (a
handler naming its class or a base of it, `Exception`, or a bare `except`)
and goes on: the raising rank then leaves like `return` does, and is
reported as such a handler is.

Two more paths are exceptional in the same way.  A collective in a
`finally` body also runs on the rank whose `try` body raised, on its way
out, while the others are still in the `try` body's collectives: the
sequences differ, and that rank can wait in it for good without exiting
(whatever the launcher does).  And with
`unhandled-exceptions = "hang"` (set in `[tool.cslint]`, or chosen by a
preset: `tensorrt_llm`'s MPI-launched executors), an exception that
leaves one rank is not a crash but a rank gone missing: work that only
some ranks do (inside an `if` arm) and that may fail, before a collective
the others go on to, is reported too (also where a handler around it only
raises again), and so is a call to a function of the
file that does such work or raises an error on its own rank-local tests.
Each finding says which case applies.

## Example
```python
import torch.distributed as dist

def step(batch, t):
    try:
        load(batch)
        dist.all_reduce(t)
    except OSError:
        return None
```

## Use instead
Agree on success before the collective (consensus):
```python
import torch
import torch.distributed as dist

def step(batch, t):
    ok = torch.tensor([1])
    try:
        load(batch)
    except OSError:
        ok.zero_()
    dist.all_reduce(ok, op=dist.ReduceOp.MIN)
    if not ok.item():
        return None
    dist.all_reduce(t)
```
"""
    VALID = [
        """\
import torch.distributed as dist

def step(batch, t):
    try:
        load(batch)
        dist.all_reduce(t)
    except OSError:
        cleanup()
        raise
""",
        """\
import torch.distributed as dist

def step(batch, t):
    try:
        load(batch)
    except OSError:
        pass
    dist.all_reduce(t)
""",
    ]
    INVALID = [
        Invalid(
            code="""\
import torch.distributed as dist

def step(batch, t):
    try:
        load(batch)
        dist.all_reduce(t)
    except OSError:
        return None
""",
            message=(
                "collective `dist.all_reduce` over all ranks depends on whether exception raised by "
                "`load(batch)` on this rank (a handled exception is rank-local; source: `load(batch)` "
                "(exception from local work))"
            ),
            refused=(
                "exception paths are not rewritten automatically: agree on the local work's success "
                "before the collective (see `cslint explain CSL104`)"
            ),
        ),
        Invalid(
            code="""\
import torch.distributed as dist

def step(batch):
    try:
        load(batch)
    except Exception:
        dist.barrier()
""",
            message=(
                "collective `dist.barrier` over all ranks depends on whether exception raised by "
                "`load(batch)` on this rank (a handled exception is rank-local; source: `load(batch)` "
                "(exception from local work))"
            ),
            refused=(
                "exception paths are not rewritten automatically: agree on the local work's success "
                "before the collective (see `cslint explain CSL104`)"
            ),
        ),
    ]

    @classmethod
    def message(cls, hazard) -> str:
        return (f"{collective_phrase(hazard)} depends on whether {hazard.cond.text} on this rank "
                f"({cls.CASES.get(hazard.cond.statement, cls.CASES['try'])}; source: {describe_source(hazard)})"
                f"{mode_suffix(hazard)}")

    #: Which case applies, by the construct that decides the path.
    CASES = {
        "try": "a handled exception is rank-local",
        "finally": "the rank that raises issues it on its way out while the others are still in the `try` "
                   "body's collectives, and can wait in it for good without exiting, so no launcher tears the "
                   "job down: whatever `unhandled-exceptions` says",
        "escape": 'unhandled-exceptions = "hang": work that only some ranks do fails on those ranks only, '
                  "and the others wait in the collective",
        "escape-callee": 'unhandled-exceptions = "hang": the call fails on the ranks whose own tests lead it to '
                         "work that can fail there, or to an error it raises, and the others wait in the collective",
    }
