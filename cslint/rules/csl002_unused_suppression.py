"""CSL002: a suppression comment that silences nothing."""

from __future__ import annotations

from typing import Optional

from .base import Invalid, Rule


class UnusedSuppression(Rule):
    CODE = "CSL002"
    NAME = "unused-suppression"
    SUMMARY = "A `# cslint: ignore` comment that suppresses no finding on its line"
    DOC = """\
## What it does
Reports a `# cslint: ignore` or `# cslint: ignore[CODES]` comment on a line
where none of the listed codes (or, for the bare form, no code at all) has a
finding. It is found after the analysis, by comparing each suppression
comment with the findings on its line, before `select`/`ignore` apply.

## Why is this bad?
A suppression outlives the hazard it was written for: once the code is fixed
or moved, the comment stays and would silently hide the next finding on that
line, which may be a real hang. A stale suppression also tells readers that
the line holds a collective hazard when it no longer does.

## Example
```python
import torch.distributed as dist

def step(t):
    dist.all_reduce(t)  # cslint: ignore[CSL101]
```

## Use instead
Remove the comment (or list only the codes that still fire on the line):
```python
import torch.distributed as dist

def step(t):
    dist.all_reduce(t)
```
"""
    VALID = [
        """\
import torch.distributed as dist

def step(t):
    if dist.get_rank() == 0:
        dist.barrier()  # cslint: ignore[CSL101]
""",
        """\
import torch.distributed as dist

def step(t):
    if dist.get_rank() == 0:
        dist.barrier()  # cslint: ignore
""",
    ]
    INVALID = [
        Invalid(
            code="""\
import torch.distributed as dist

def step(t):
    dist.all_reduce(t)  # cslint: ignore[CSL101]
""",
            message="unused suppression (CSL101): no finding on this line",
            refused="CSL002 findings have no automatic fix",
        ),
        Invalid(
            code="""\
x = 1  # cslint: ignore
""",
            message="unused suppression (all codes): no finding on this line",
            refused="CSL002 findings have no automatic fix",
        ),
    ]

    @classmethod
    def message(cls, codes: Optional[frozenset]) -> str:
        """The finding's text for a comment listing ``codes`` (None: the bare form)."""
        listed = ", ".join(sorted(codes)) if codes else "all codes"
        return f"unused suppression ({listed}): no finding on this line"
