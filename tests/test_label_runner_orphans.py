"""A hung program's ranks end even when the process running it is killed first.

tests/corpus/label.py runs each generated program under mpiexec in a session
of its own and kills that session on a timeout; a test run stopped with
SIGKILL never reaches that kill, and a hung program's ranks used to spin at
100 % CPU for as long as the machine stayed up.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(
    shutil.which("mpiexec", path=str(Path(sys.executable).parent)) is None or shutil.which("timeout") is None,
    reason="needs the venv's mpiexec and coreutils timeout")


def _spinning(program: Path) -> list[int]:
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


def test_ranks_of_a_hung_program_end_after_the_runner_is_killed(tmp_path):
    program = tmp_path / "hang_forever_program.py"
    program.write_text("while True:\n    pass\n")
    runner = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(ROOT / "tests" / "corpus")!r})
        import label
        label.run_program(__import__("pathlib").Path({str(program)!r}), 2, timeout=2.0)
    """)], cwd=str(ROOT))
    try:
        deadline = time.monotonic() + 20
        while not _spinning(program) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _spinning(program), "the program's ranks never started"
        runner.send_signal(signal.SIGKILL)  # as a stopped test run: no finally, no kill of the session
        runner.wait()
        deadline = time.monotonic() + 30  # the bound is the timeout + 10 s, then 5 s to KILL
        while _spinning(program) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert not _spinning(program), "ranks still spinning after the runner was killed"
    finally:
        for pid in _spinning(program):
            os.kill(pid, signal.SIGKILL)
