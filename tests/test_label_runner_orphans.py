"""A hung program's ranks end even when the process running it is killed first.

tests/corpus/label.py runs each generated program under mpiexec in a session
of its own and kills that session on a timeout; a test run stopped with
SIGKILL never reaches that kill, and a hung program's ranks used to spin at
100 % CPU for as long as the machine stayed up.
"""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from orphans import ROOT, run_killed

pytestmark = pytest.mark.skipif(
    shutil.which("mpiexec", path=str(Path(sys.executable).parent)) is None or shutil.which("timeout") is None,
    reason="needs the venv's mpiexec and coreutils timeout")


def test_ranks_of_a_hung_program_end_after_the_runner_is_killed(tmp_path):
    program = tmp_path / "hang_forever_program.py"
    program.write_text("while True:\n    pass\n")
    run_killed(f"""
        import sys
        sys.path.insert(0, {str(ROOT / "tests" / "corpus")!r})
        import label
        label.run_program(__import__("pathlib").Path({str(program)!r}), 2, timeout=2.0)
    """, program, ranks=1, within=30)  # the bound is the timeout + 10 s, then 5 s to KILL
