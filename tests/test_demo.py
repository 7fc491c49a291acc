"""`make demo`: RANKS reaches the validation, and the demo ends with a
before/after table that fits in 100 columns, the long outputs in files."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tensorrt_llm_patch import demo, validate

REPO_ROOT = Path(__file__).resolve().parent.parent


def test_make_demo_passes_ranks_to_the_demo_and_the_demo_to_validate():
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    dry = subprocess.run(["make", "-n", "demo", "RANKS=2", "DEMO_OUT=somewhere"], cwd=REPO_ROOT, capture_output=True,
                         text=True, timeout=60)
    assert dry.returncode == 0, dry.stderr
    (line,) = [line for line in dry.stdout.splitlines() if "tensorrt_llm_patch.demo" in line]
    assert line.split()[-4:] == ["--out", "somewhere", "--ranks", "2"]

    args = argparse.Namespace(ranks=2, backend="mpi", matrix=True)
    command = [str(a) for a in demo.steps(args, Path("out"))["validate"]]
    assert command[command.index("--ranks") + 1] == "2" and "--matrix" in command
    parsed = validate.build_parser().parse_args(command[command.index("validate") + 1:])
    assert {config.ranks for config in validate.configs_for(parsed)} == {2}
    assert len(validate.configs_for(parsed)) == 10  # every configuration of the matrix (the scenarios too), at 2 ranks
    parsed.ranks = None
    assert {config.ranks for config in validate.configs_for(parsed)} == {2, 4}  # validate's own default


def test_the_table_fits_in_100_columns_however_long_the_names():
    document = {"configs": [
        {"config": "mpi adp2 asym k=3 gate=on " + "x" * 120, "expect_hang": True,
         "unpatched": {"outcome": "hang caught", "detect_seconds": 0.04}, "patched": {"outcome": "completed",
                                                                                    "tokens_match": True},
         "problems": []},
        {"config": "mpi pp2 asym k=2", "expect_hang": False, "unpatched": {"outcome": "completed"},
         "patched": {"outcome": "completed", "tokens_match": False}, "problems": ["patched: tokens differ"]},
    ]}
    lines = demo.before_after_table(document).splitlines()
    assert all(len(line) <= 100 for line in lines)
    assert lines[0].split() == ["configuration", "expected", "before", "(unpatched)", "after", "(patched)", "tokens",
                                "verdict"]
    assert lines[3].split() == ["mpi", "pp2", "asym", "k=2", "complete", "completed", "completed", "DIFFER", "FAIL"]


def test_the_demo_runs_and_ends_with_its_table(tmp_path):
    if shutil.which("mpiexec", path=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")) is None:
        pytest.skip("mpiexec (the mpich wheel) is not installed")
    out = tmp_path / "demo-out"
    done = subprocess.run([sys.executable, "-m", "tensorrt_llm_patch.demo", "--out", str(out), "--ranks", "2",
                           "--no-matrix"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    lines = done.stdout.rstrip("\n").splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("configuration "))
    assert lines[header + 2].split()[:6] == ["mpi", "adp2", "asym", "k=3", "gate=on", "hang"]
    assert lines[header + 2].split()[-1] == "ok" and len(lines) == header + 3  # the table is the end
    assert all(len(line) <= 100 for line in lines[header:])
    # the long outputs are files under the demo's output, named in what it printed
    lint = (out / "lint.txt").read_text(encoding="utf-8")
    assert "= why:" in lint and "lint.txt" in done.stdout and "= why:" not in done.stdout
    assert re.search(r"^  \d+\tCSL102\tdivergent-early-exit$", done.stdout, re.M)
    (diagnosis,) = out.glob("diagnosis-*.txt")
    assert diagnosis.name in done.stdout and diagnosis.stat().st_size > 0
    assert (out / "patch" / "patch.diff").is_file() and (out / "validate.json").is_file()
