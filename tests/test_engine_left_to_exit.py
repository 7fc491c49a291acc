"""A process that ends with ``os._exit`` (the ``cslint`` command,
``cli.console_main``) leaves what its run kept for the run's whole length
-- the syntax trees behind the pending summaries of a ``--jobs 1`` run --
for the exit to return (``engine.leave_to_exit``), instead of freeing it one
object at a time as the run ends; a library caller, whose process goes on,
has it freed as before.  The findings are the same either way."""

import textwrap

from cslint import engine
from cslint.api import check_paths

SOURCE = textwrap.dedent("""
    import torch.distributed as dist

    def describe(name):
        return name.upper()

    def step(rank, t):
        if rank == 0:
            dist.all_reduce(t)
""")


def _check(tmp_path):
    (tmp_path / "step.py").write_text(SOURCE)
    return [(f.code, f.line) for f in check_paths([str(tmp_path)], cache=False, jobs=1).findings]


def test_a_process_leaving_its_run_to_the_exit_keeps_the_pending_summaries(tmp_path, monkeypatch):
    monkeypatch.setattr(engine, "_LEFT_TO_EXIT", None)
    engine.leave_to_exit()
    findings = _check(tmp_path)
    left = engine._LEFT_TO_EXIT
    # the pending summary of ``describe`` (it writes no field, reaches no collective), kept with its tree
    assert any(str(tmp_path / "step.py") in kept for kept in left)
    assert findings == [("CSL101", 9)]  # the divergent collective next to it stays reported


def test_a_library_caller_keeps_nothing_past_the_run(tmp_path, monkeypatch):
    monkeypatch.setattr(engine, "_LEFT_TO_EXIT", None)
    assert _check(tmp_path) == [("CSL101", 9)]
    assert engine._LEFT_TO_EXIT is None
