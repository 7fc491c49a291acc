"""The human report of cslint.runtime, from real multi-rank runs: `print(diagnose(dir))` and
`python -m cslint.runtime report DIR` name each rank's file and lines, link the static findings, and leave
out cslint's own frames and runpy's."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cslint.runtime import diagnose
from cslint.runtime.report import display_path
from tensorrt_llm_patch.validate_runner import (
    CAUGHT,
    DEFAULT_TREE,
    RunConfig,
    find_mpiexec,
    mpiexec_flags,
    run_config,
    run_in_group,
)

ROOT = Path(__file__).resolve().parents[1]
MPIEXEC = find_mpiexec()
needs_mpi = pytest.mark.skipif(MPIEXEC is None, reason="mpiexec not found (pip install mpi4py mpich)")

STALLING_PROGRAM = """\
from mpi4py import MPI

comm = MPI.COMM_WORLD
rank = comm.Get_rank()


def publish(value):
    return comm.bcast(value, root=0)


def gather_status(value):
    return comm.allgather(value)


for step in range(3):
    gather_status(step)
if rank == 0:
    gather_status("rank 0 went this way")
else:
    publish("rank 1 went that way")
"""


def line_of(text: str, needle: str, nth: int = 1) -> int:
    """1-based line of the `nth` line holding `needle` (so the tests follow edits of the program)."""
    hits = [i for i, line in enumerate(text.splitlines(), 1) if needle in line]
    return hits[nth - 1]


def report_cli(report: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cslint.runtime", "report", str(report)], capture_output=True,
                          text=True, timeout=120, cwd=str(ROOT), check=False)


@pytest.fixture(scope="module")
def stalled_run(tmp_path_factory):
    """Two MPI ranks started by the launcher (`python -m cslint.runtime`) that stall in different collectives."""
    if MPIEXEC is None:
        pytest.skip("mpiexec not found")
    tmp = tmp_path_factory.mktemp("stall")
    program = tmp / "prog.py"
    program.write_text(STALLING_PROGRAM)
    report = tmp / "rep"
    proc = run_in_group([MPIEXEC, *mpiexec_flags(MPIEXEC), "-n", "2", sys.executable, "-m", "cslint.runtime",
                         "--report-dir", str(report), "--timeout", "1", str(program)], timeout=60, cwd=str(ROOT))
    assert proc.returncode != 0, proc.stdout + proc.stderr
    return program, report


@needs_mpi
@pytest.mark.timeout(180)
def test_report_of_a_stall_names_each_rank_s_lines(stalled_run):
    program, report = stalled_run
    text = str(diagnose(str(report)))
    source = program.read_text()
    allgather = line_of(source, "return comm.allgather(value)")
    bcast = line_of(source, "return comm.bcast(value, root=0)")
    rank0_call = line_of(source, 'gather_status("rank 0 went this way")')
    rank1_call = line_of(source, 'publish("rank 1 went that way")')
    assert "the ranks parted at collective #3 of group 'world'" in text, text
    rank0, rank1 = text.split("\nrank 1 ")[0].split("\nrank 0 ")[1], text.split("\nrank 1 ")[1]
    assert "in allgather #3" in rank0 and "in bcast #3" in rank1.splitlines()[0]
    assert f"at {program}:{allgather} in gather_status" in rank0
    assert f"{program}:{rank0_call} in <module>" in rank0
    assert f"at {program}:{bcast} in publish" in rank1
    assert f"{program}:{rank1_call} in <module>" in rank1
    # the launcher's and runpy's frames are the same on every rank: not in the report
    assert "runpy" not in text and "cslint/runtime" not in text and "__main__.py" not in text
    # the static findings that explain it, each on the path of the rank that took that branch
    assert re.search(rf"{re.escape(str(program))}:{rank0_call}: CSL101, on the path of rank 0\b", text), text
    assert re.search(rf"{re.escape(str(program))}:{rank1_call}: CSL101, on the path of rank 1\b", text), text
    assert "runs only when `rank == 0`" in text


@needs_mpi
@pytest.mark.timeout(180)
def test_report_command_prints_the_same_report(stalled_run):
    _, report = stalled_run
    proc = report_cli(report)
    assert proc.returncode == 1, proc.stderr  # 1: the ranks diverged
    assert proc.stdout.rstrip("\n") == str(diagnose(str(report)))
    assert repr(diagnose(str(report), link_findings=False)).startswith("<Diagnosis mismatch at #3 of group 'world'")


def test_report_command_usage_errors(tmp_path):
    proc = report_cli(tmp_path / "missing")
    assert proc.returncode == 2 and "no such directory" in proc.stderr
    proc = report_cli(tmp_path)
    assert proc.returncode == 0 and "no rank state files" in proc.stdout


@needs_mpi
@pytest.mark.timeout(120)
def test_report_of_the_replica_names_the_seed_forward_skip(tmp_path):
    """DSpark with the fill gate off: the seeding rank skips `_can_queue`; the report puts each rank at its
    own line and links the finding on the `continue` that skips it."""
    cfg = RunConfig("mpi", 2, 3, "off")
    result = run_config(cfg, DEFAULT_TREE, tmp_path / "run", model="numpy", sanitizer_timeout=1.0, timeout=45,
                        mpiexec=MPIEXEC, link_findings=True, svg=False)
    assert result.outcome == CAUGHT, result.log[-2000:]
    text = str(result.diagnosis)
    executor = DEFAULT_TREE / "tensorrt_llm" / "_torch" / "pyexecutor" / "py_executor.py"
    source = executor.read_text()
    shown = display_path(str(executor))  # relative to the working directory when below it
    can_queue_call = line_of(source, "can_queue, can_queue_this_rank = self._can_queue(scheduled_batch)")
    can_queue_gather = line_of(source, "self.dist.tp_allgather(scheduled_batch.batch_size)")
    done_reduce = line_of(source, "return self.dist.allreduce(local_outstanding) == 0")
    blocks = re.split(r"\n(?=ranks? \d)", text.split("\n\n")[1])  # one block per rank (or group of ranks)
    assert len(blocks) == 2, text
    seeding = next(b for b in blocks if "in allreduce" in b.splitlines()[0])
    waiting = next(b for b in blocks if "in tp_allgather" in b.splitlines()[0])
    assert f"at {shown}:{done_reduce} in PyExecutor._all_ranks_done" in seeding
    assert f"at {shown}:{can_queue_gather} in PyExecutor._can_queue" in waiting
    assert f"{shown}:{can_queue_call} in PyExecutor._executor_loop" in waiting
    assert f"{shown}:{can_queue_call}: CSL102" in text and "_ran_seed_forward_this_iter" in text
    assert "run_gen_server.py" in text  # the entry's frame is the user's: kept
    assert "cslint/runtime" not in text


def test_report_without_findings_says_so(tmp_path):
    """The JSON form carries what the text shows; a stall in a file without findings says so."""
    program = tmp_path / "prog.py"
    program.write_text(textwrap.dedent("""
        def step():
            pass
    """))
    import json

    def state(rank, status, line):
        entry = {"op": "allgather", "group": "world", "seq": 0, "site": f"prog.py:{line}", "function": "step",
                 "callpath": [{"path": str(program), "line": line, "function": "step"},
                              {"path": "<frozen runpy>", "line": 88, "function": "_run_code"}],
                 "digest": line, "payload": "int", "t_start": 1.0}
        return {"rank": rank, "status": status, "history": [], "current": entry, "stack": [],
                "sequence": {"world": 1}, "groups": {}}

    for rank in (0, 1):
        (tmp_path / f"rank{rank}.json").write_text(json.dumps(state(rank, "timeout", 2 + rank)))
    diagnosis = diagnose(str(tmp_path))
    text = str(diagnosis)
    assert f"at {program}:2 in step" in text and f"at {program}:3 in step" in text
    assert "cslint check reports nothing on these call paths." in text
    assert "runpy" not in text
    assert diagnosis.to_json()["sites"][0]["frames"] == [{"path": str(program), "line": 2, "function": "step"}]
