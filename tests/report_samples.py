"""Hand-built findings over a small executor module, for reporter and baseline tests.

They do not depend on the analysis: the reporters must print whatever a
``CheckResult`` holds.  ``write_sample`` writes the module the findings point
into, so source snippets can be checked.
"""

from __future__ import annotations

import os

from cslint.model import ChainLink, CheckResult, FileError, Finding, FixHint, Span

SAMPLE_SOURCE = '''\
class Executor:
    def __init__(self, dist):
        self.dist = dist
        self.active_requests = []

    def _can_queue(self, batch):
        if not self.active_requests:
            return True
        sizes = self.dist.tp_allgather(len(self.active_requests))
        return max(sizes) > 0

    def _step(self):
        if len(self.active_requests) > 2:
            self.dist.tp_allreduce(1)
        ok = self.dist.tp_allgather(0)  # cslint: ignore[CSL101]
        return ok
'''


def write_sample(directory: str, name: str = "executor.py") -> str:
    """Write the sample module into `directory`; return its path."""
    path = os.path.join(directory, name)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(SAMPLE_SOURCE)
    return path


def early_exit_finding(path: str, *, line: int = 9, condition: str = "not self.active_requests", guard_line: int = 7) -> Finding:
    return Finding(
        code="CSL102",
        path=path,
        line=line,
        column=17,
        end_line=line,
        end_column=66,
        message="`tp_allgather` is skipped on ranks that return early when `not self.active_requests` holds",
        collective="tp_allgather",
        group="tp",
        chain=[
            ChainLink(path, line, "tp_allgather over the tp group", "collective"),
            ChainLink(path, guard_line, f"early return on `{condition}`", "condition"),
            ChainLink(path, 4, "`self.active_requests` is a per-rank request queue", "source"),
        ],
        fix=FixHint("always-enter", False, "the early exit returns a value computed before the collective"),
        function="Executor._can_queue",
        condition=condition,
        guard_kind="early-exit",
        guard=Span(guard_line + 1, 13, guard_line + 1, 24),  # the `return` statement
        callee="self.dist.tp_allgather",
        api="trtllm",
        source="self.active_requests",
    )


def branch_finding(path: str) -> Finding:
    return Finding(
        code="CSL101",
        path=path,
        line=14,
        column=13,
        end_line=14,
        end_column=36,
        message="`tp_allreduce` runs only on ranks where `len(self.active_requests) > 2` holds",
        collective="tp_allreduce",
        group="tp",
        chain=[
            ChainLink(path, 14, "tp_allreduce over the tp group", "collective"),
            ChainLink(path, 13, "branch on `len(self.active_requests) > 2`", "condition"),
            ChainLink(path, 4, "`self.active_requests` is a per-rank request queue", "source"),
        ],
        fix=FixHint("consensus", True),
        function="Executor._step",
        condition="len(self.active_requests) > 2",
        guard_kind="branch",
        guard=Span(13, 9, 14, 36),
        callee="self.dist.tp_allreduce",
        api="trtllm",
        source="self.active_requests",
    )


def unused_suppression_finding(path: str) -> Finding:
    return Finding(
        code="CSL002",
        path=path,
        line=15,
        column=41,
        end_line=15,
        end_column=67,
        message="unused suppression: `# cslint: ignore[CSL101]` silences nothing",
        collective="",
        group="",
    )


def sample_result(path: str) -> CheckResult:
    """Three findings (two sharing one root cause, one without) and one unreadable file."""
    directory = os.path.dirname(path)
    return CheckResult(
        files=3,
        findings=[branch_finding(path), early_exit_finding(path), unused_suppression_finding(path)],
        errors=[FileError(os.path.join(directory, "broken.py"), "cannot read: permission denied")],
    )
