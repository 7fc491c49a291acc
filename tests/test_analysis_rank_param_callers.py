"""A parameter named like a rank is what the tree's calls pass it, whatever
those calls pass (``Program._rank_params_callers_pass``).

A function no call of the tree reaches (a spawned worker) takes such a
parameter for this process's rank.  A call from a function summarised in
another file (one that reaches no collective itself) counted only where its
arguments carried something: the summary keeps a call for what it passes on
(``SummaryWalk._calls``), so ``maybe_sync(step)`` made the parameter the
caller's value while ``maybe_sync(0)`` left it this process's rank, and the
test over it rank-local, although every rank passes 0.  The callers are now
read from every call with arguments a summarised function makes
(``FuncFacts.passing_refs``), a part of the function that needs no
evaluation."""

from __future__ import annotations

import textwrap

from cslint.api import check_paths

COMM = """
    import torch.distributed as dist


    def _barrier_all():
        dist.barrier()


    def maybe_sync(rank):
        if rank == 0:
            _barrier_all()
"""

LOOP = """
    import torch.distributed as dist

    from pkg.comm import maybe_sync


    def step(t):
        maybe_sync({argument})


    def reduce(t):
        dist.all_reduce(t)
"""


def _findings(tmp_path, argument: str) -> list:
    root = tmp_path / "pkg"
    root.mkdir()
    (root / "__init__.py").write_text("")
    (root / "comm.py").write_text(textwrap.dedent(COMM))
    (root / "loop.py").write_text(textwrap.dedent(LOOP.format(argument=argument)))
    return sorted((f.code, f.path.rsplit("/", 1)[-1], f.line) for f in check_paths([str(root)]).findings)


def test_a_constant_a_summarised_caller_passes_is_the_parameter(tmp_path):
    # VALID: every rank calls maybe_sync(0), so every rank takes the same arm
    assert _findings(tmp_path, "0") == []


def test_a_value_a_summarised_caller_passes_is_the_parameter(tmp_path):
    # VALID: the caller's own parameter, as before
    assert _findings(tmp_path, "t") == []


def test_the_callers_rank_is_still_reported_at_the_caller(tmp_path):
    # INVALID: the caller passes this process's rank; the guard reads it
    found = _findings(tmp_path, "dist.get_rank()")
    assert found and all(code == "CSL101" for code, _path, _line in found)
