"""CSL001: a file that could not be analysed."""

from __future__ import annotations

from ..model import Finding
from .base import Invalid, Rule


class NotAnalysable(Rule):
    CODE = "CSL001"
    NAME = "not-analysable"
    SUMMARY = "File could not be analysed (syntax error, encoding, binary, unreadable or too large)"
    DOC = """\
## What it does
Reports a Python file that cslint found but could not analyse: a syntax
error (including syntax newer than the running interpreter), source that is
not valid UTF-8 and declares no other encoding, binary content (NUL bytes), a
file that cannot be read, or one larger than `max-file-size`.

Every file named on the command line is parsed. In a directory, every file is
read, and parsed when it could hold a collective (the prefilter selects the
files that mention a collective call site or call a function found to issue
one); a file that cannot reach a collective is not parsed, so its syntax
errors are not reported.

## Why is this bad?
A file that is not analysed is not checked: a divergent collective in it
would go unnoticed. The finding makes the gap visible instead of silently
passing the file.

## Example
```python
def step(self):
    if self.rank == 0
        self.dist.barrier()
```

## Use instead
```python
def step(self):
    if self.rank == 0:
        self.dist.barrier()
```
"""
    VALID = [
        "x = 1\n",
        "def f(a, b):\n    return a + b\n",
    ]
    INVALID = [
        Invalid(code="sizes = (1,\n", message="file could not be analysed: syntax error: '(' was never closed",
                refused="CSL001 findings have no automatic fix"),
        Invalid(code="import torch.distributed as dist\nif dist.get_rank() == 0\n    dist.barrier()\n",
                message="file could not be analysed: syntax error: expected ':'",
                refused="CSL001 findings have no automatic fix"),
    ]

    @classmethod
    def message(cls, problem: str) -> str:
        return f"file could not be analysed: {problem}"

    @classmethod
    def finding(cls, path: str, problem: str, line: int = 1, column: int = 1) -> Finding:
        """The finding for a file that could not be analysed."""
        line, column = max(1, line), max(1, column)
        return Finding(code=cls.CODE, path=path, line=line, column=column, end_line=line, end_column=column,
                       message=cls.message(problem), collective="", group="", function="", guard_kind="", api="")
