"""Fixed seed fixtures run on MPI: the original hangs on divergent inputs, the fix completes,
and on inputs where the original completes both give the same results on every rank.

Every run sits under MPIEXEC_TIMEOUT (hydra kills the job) and a timeout that
kills the whole process group, from here and, should this process be killed
first, by itself (``cslint.boundedruns``), so no rank is left behind.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "fixtures", "codemods"))

from codemod_cases import BEHAVIOUR_CASES, fixture_path, seed_findings

from codemods.driver import fix_source
from cslint.boundedruns import start_bounded, wait_bounded

BIN = os.path.dirname(sys.executable)
MPIEXEC = os.path.join(BIN, "mpiexec")
HANG_SECONDS = 2  # a run expected to hang is given this long (hydra's MPIEXEC_TIMEOUT)
RUN_SECONDS = 30  # a run expected to complete (generous: the machine may be busy)
_ORIGINAL_RUNS: dict = {}  # (path, scenario, ranks) -> result; originals are shared by strategies

pytestmark = pytest.mark.skipif(not os.path.exists(MPIEXEC), reason="mpiexec (mpich wheel) is not installed")


def run_mpi(path: str, scenario: str, ranks: int, out_dir, limit: int = RUN_SECONDS) -> tuple[int, dict[int, dict]]:
    """(exit status, results by rank); a hang shows as missing ranks."""
    out_dir.mkdir(parents=True, exist_ok=True)
    for stale in out_dir.glob("rank*.json"):
        stale.unlink()
    env = dict(os.environ, MPIEXEC_TIMEOUT=str(limit), FIXTURE_OUT=str(out_dir))
    proc = start_bounded([MPIEXEC, "-n", str(ranks), sys.executable, path, scenario], limit + 20,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    wait_bounded(proc, limit + 20)
    results = {}
    for item in out_dir.glob("rank*.json"):
        data = json.loads(item.read_text())
        results[data["rank"]] = data
    return proc.returncode, results


def run_original(path: str, scenario: str, ranks: int, out_dir, limit: int = RUN_SECONDS):
    key = (path, scenario, ranks)
    if key not in _ORIGINAL_RUNS:
        _ORIGINAL_RUNS[key] = run_mpi(path, scenario, ranks, out_dir, limit)
    return _ORIGINAL_RUNS[key]


@pytest.fixture(scope="module", params=BEHAVIOUR_CASES, ids=lambda case: "-".join(case))
def fixed_pair(request, tmp_path_factory):
    """(original path, fixed path) for one seed fixture and strategy."""
    name, strategy = request.param
    original = fixture_path(name)
    with open(original, encoding="utf-8") as handle:
        source = handle.read()
    fix = fix_source(source, original, seed_findings(name, original, source), strategy=strategy)
    assert fix.applied and not fix.refused, [r.reason for r in fix.refused]
    fixed = tmp_path_factory.mktemp(name) / f"{name}.py"
    fixed.write_text(fix.fixed, encoding="utf-8")
    return original, str(fixed)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("ranks", [2, 4])
def test_divergent_original_hangs_and_fix_completes(fixed_pair, ranks, tmp_path):
    original, fixed = fixed_pair
    rc, results = run_original(original, "divergent", ranks, tmp_path / "original", limit=HANG_SECONDS)
    # hydra's exit status after MPIEXEC_TIMEOUT is not reliable: a hang is a rank that never reported
    assert len(results) < ranks, "the original was expected to hang on divergent inputs"
    rc, results = run_mpi(fixed, "divergent", ranks, tmp_path / "fixed")
    assert rc == 0, f"the fixed version did not complete (exit {rc})"
    assert sorted(results) == list(range(ranks))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("ranks", [2, 4])
def test_same_results_where_the_original_completes(fixed_pair, ranks, tmp_path):
    # every rank runs both uniform scenarios in one job: all work, and all skip
    original, fixed = fixed_pair
    scenarios = "uniform-run,uniform-skip"
    rc_original, before = run_original(original, scenarios, ranks, tmp_path / "original")
    assert rc_original == 0 and sorted(before) == list(range(ranks))
    rc_fixed, after = run_mpi(fixed, scenarios, ranks, tmp_path / "fixed")
    assert rc_fixed == 0
    assert after == before
    assert all(set(result) == {"rank", "uniform-run", "uniform-skip"} for result in after.values())
