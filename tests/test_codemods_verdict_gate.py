"""A status gate whose verdict a caller tests before a collective: always-enter decides from the gathered result.

`if not active: return False` before a status gather, in a function whose
result a caller tests before its own collective (``fix_facts.
result_decides_callers``): deferring the return with each rank's own value
would still part the ranks at the caller, so the rewrite lets the exiting rank
decide from the gathered statuses like the others.  Checked on the analysis'
own findings, by re-lint, and on MPI ranks (under a timeout that kills the job).
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "fixtures", "codemods"))

from codemod_cases import fixture_path

from codemods import driver
from codemods.driver import fix_source
from cslint.boundedruns import start_bounded, wait_bounded

MPIEXEC = os.path.join(os.path.dirname(sys.executable), "mpiexec")
HANG_SECONDS = 2
RUN_SECONDS = 30


def _check(path):
    from cslint.api import check_paths

    return check_paths([str(path)], cache=False)


def _source(name):
    with open(fixture_path(name), encoding="utf-8") as handle:
        return handle.read()


def test_the_analysis_says_whether_a_caller_tests_the_result():
    (verdict,) = _check(fixture_path("fill_verdict")).findings
    assert verdict.function == "Executor._sync_has_insufficient_kv"
    assert verdict.fix_facts.result_decides_callers
    # the seed fill gate's caller reads the result only for rank-local work: no collective depends on it
    gate = [f for f in _check(fixture_path("fill_gate")).findings
            if f.function == "Executor._sync_gen_only_benchmark_has_insufficient_kv"]
    assert gate and not any(f.fix_facts.result_decides_callers for f in gate)


def test_always_enter_decides_from_the_gathered_result_and_relints_clean(tmp_path):
    target = tmp_path / "fill_verdict.py"
    target.write_text(_source("fill_verdict"), encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        open(os.path.join(os.path.dirname(fixture_path("fill_verdict")), "pyproject.toml"), encoding="utf-8").read(),
        encoding="utf-8")
    plan = driver.plan_fixes(_check(target))
    (applied,) = plan.applied
    assert applied.strategy == "always-enter" and not applied.safe
    assert "decides from the gathered result" in applied.reason
    fixed = plan.files[0].fixed
    assert "return early_result" not in fixed and "early_result" not in fixed
    assert "statuses = self.dist.tp_allgather((queued, short) if not exit_early else (True, False))" in fixed
    driver.write_fixes(plan)
    assert not _check(target).findings


def test_the_result_is_kept_where_no_caller_tests_it():
    path, source = fixture_path("fill_verdict"), _source("fill_verdict")
    (finding,) = _check(path).findings
    local = dataclasses.replace(finding, fix_facts=dataclasses.replace(finding.fix_facts,
                                                                       result_decides_callers=False))
    fix = fix_source(source, path, [local])
    assert "return early_result" in fix.fixed


def _run(path, scenario, ranks, out_dir, limit):
    out_dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, MPIEXEC_TIMEOUT=str(limit), FIXTURE_OUT=str(out_dir))
    proc = start_bounded([MPIEXEC, "-n", str(ranks), sys.executable, str(path), scenario], limit + 20,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    wait_bounded(proc, limit + 20)
    results = {}
    for item in out_dir.glob("rank*.json"):
        data = json.loads(item.read_text())
        results[data["rank"]] = data
    return proc.returncode, results


@pytest.mark.skipif(not os.path.exists(MPIEXEC), reason="mpiexec (mpich wheel) is not installed")
@pytest.mark.timeout(150)
def test_on_mpi_ranks_only_deciding_from_the_gathered_result_keeps_the_caller_together(tmp_path):
    path, source = fixture_path("fill_verdict"), _source("fill_verdict")
    (finding,) = _check(path).findings
    together = tmp_path / "together.py"
    together.write_text(fix_source(source, path, [finding]).fixed, encoding="utf-8")
    local = dataclasses.replace(finding, fix_facts=dataclasses.replace(finding.fix_facts,
                                                                       result_decides_callers=False))
    kept = tmp_path / "kept.py"
    kept.write_text(fix_source(source, path, [local]).fixed, encoding="utf-8")
    ranks = 2
    # the original hangs in the status gather; keeping the local result moves the hang to the caller's gather
    for hanging in (path, kept):
        _rc, results = _run(hanging, "divergent", ranks, tmp_path / f"{os.path.basename(hanging)}-d", HANG_SECONDS)
        assert len(results) < ranks, f"{hanging} was expected to hang on divergent inputs"
    rc, results = _run(together, "divergent", ranks, tmp_path / "together-d", RUN_SECONDS)
    assert rc == 0 and sorted(results) == list(range(ranks))
    assert all(r["divergent"]["steps"] == ["stalled"] * 4 for r in results.values())
    # where the original completes, the fix gives the same results on every rank
    scenarios = "uniform-run,uniform-skip"
    rc, before = _run(path, scenarios, ranks, tmp_path / "original-u", RUN_SECONDS)
    assert rc == 0 and sorted(before) == list(range(ranks))
    rc, after = _run(together, scenarios, ranks, tmp_path / "together-u", RUN_SECONDS)
    assert rc == 0 and after == before
