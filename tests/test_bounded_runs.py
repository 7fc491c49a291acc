"""A job of ranks started through ``cslint.boundedruns`` ends even when the
process running it is killed first (a test run stopped with SIGKILL never
reaches its own kill of the job).

The launcher here is a plain program that starts two spinning ranks and
waits for them, as ``mpiexec`` does; the forked ranks are those of
``multiprocessing``'s fork context, as the gloo tests start them.
"""
from __future__ import annotations

import shutil
import signal
import sys
import time

import pytest

from orphans import run_killed, spinning

_LAUNCHER = """
import subprocess, sys
ranks = [subprocess.Popen([sys.executable, sys.argv[1]]) for _ in range(2)]
for rank in ranks:
    rank.wait()
"""


@pytest.mark.skipif(shutil.which("timeout") is None, reason="needs coreutils timeout")
def test_a_launched_job_ends_by_itself_after_its_runner_is_killed(tmp_path):
    program = tmp_path / "hang_forever_rank.py"
    program.write_text("while True:\n    pass\n")
    launcher = tmp_path / "launcher.py"
    launcher.write_text(_LAUNCHER)
    run_killed(f"""
        import subprocess, sys
        from cslint.boundedruns import start_bounded, wait_bounded
        process = start_bounded([sys.executable, {str(launcher)!r}, {str(program)!r}], 2.0)
        wait_bounded(process, 600)  # the runner's own deadline is never reached: it is killed first
    """, program, ranks=2, within=30)  # the session ends 2 + 10 s after it started, then KILL 5 s later


def test_the_runner_s_own_deadline_kills_the_whole_job(tmp_path):
    program = tmp_path / "hang_forever_rank.py"
    program.write_text("while True:\n    pass\n")
    launcher = tmp_path / "launcher.py"
    launcher.write_text(_LAUNCHER)
    from cslint.boundedruns import run_bounded

    done = run_bounded([sys.executable, str(launcher), str(program)], timeout=3.0)
    assert done.returncode == -signal.SIGKILL
    deadline = time.monotonic() + 10
    while spinning(program) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not spinning(program)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_forked_ranks_die_with_the_runner(tmp_path):
    marker = tmp_path / "forked_rank_marker"
    run_killed(f"""
        import multiprocessing, os
        from cslint.boundedruns import fork_ranks

        def spin(rank, marker):  # exec keeps the parent-death signal; the marker names the rank in /proc
            os.execv({sys.executable!r}, [{sys.executable!r}, "-c", "while True: pass", marker])

        ranks = fork_ranks(multiprocessing.get_context("fork"), spin, [(r, {str(marker)!r}) for r in range(2)])
        for rank in ranks:
            rank.join(600)
    """, marker, ranks=2, within=10)
