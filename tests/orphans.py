"""Helpers for the tests that kill a runner of ranks and look for the ranks
it leaves behind (tests/test_bounded_runs.py, tests/test_label_runner_orphans.py)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def spinning(program: Path) -> list[int]:
    """Pids of live processes that run ``program`` (it is one of their
    arguments: the ranks, and the launcher above them)."""
    found = []
    wanted = str(program).encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            arguments = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().split(") ", 1)[1][:1]
        except OSError:
            continue
        if wanted in arguments and state != "Z":
            found.append(int(entry.name))
    return found


def run_killed(runner_code: str, program: Path, *, ranks: int, within: float) -> None:
    """Start a runner, wait until ``ranks`` processes run ``program``, kill
    the runner with SIGKILL (as a stopped test run: no ``finally``, no kill
    of the job) and check that none is left after ``within`` seconds."""
    runner = subprocess.Popen([sys.executable, "-c", textwrap.dedent(runner_code)], cwd=str(ROOT),
                              env=dict(os.environ, PYTHONPATH=str(ROOT)))
    try:
        deadline = time.monotonic() + 30
        while len(spinning(program)) < ranks and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(spinning(program)) >= ranks, "the ranks never started"
        runner.send_signal(signal.SIGKILL)
        runner.wait()
        deadline = time.monotonic() + within
        while spinning(program) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert not spinning(program), "ranks still spinning after the runner was killed"
    finally:
        for pid in spinning(program):
            os.kill(pid, signal.SIGKILL)
