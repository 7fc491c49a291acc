"""Every safe fix of the codemod corpus runs on real ranks and keeps each rank's values.

The corpus is every rule's INVALID examples (`cslint.rules`, with their
expected fixes) and the seed fixtures under `tests/fixtures/codemods`.  Every
example that `cslint fix` (safe fixes only, as without `--unsafe-fixes`)
changes is run, not a sample: on 2 gloo ranks (torch.distributed, processes
forked, under a timeout) or, for the mpi4py API, on 2 MPI ranks under
`mpiexec`.  Per rank and scenario, the fixed program must end with what the
original ends with when its collective runs over the ranks that reach it
(see `tests/fix_behaviour.py`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "fixtures", "codemods"))

from codemod_cases import SEED_BEHAVIOURS, SEED_FIXTURES, fixture_path, seed_findings  # noqa: E402
from fix_behaviour import gloo_rank  # noqa: E402

from codemods.driver import fix_source  # noqa: E402
from cslint.api import check_source  # noqa: E402
from cslint.boundedruns import fork_ranks, kill_session, start_bounded  # noqa: E402
from cslint.rules import all_rules  # noqa: E402

RANKS = 2
MPIEXEC = os.path.join(os.path.dirname(sys.executable), "mpiexec")


def _safe_fixes() -> list:
    """(id, behaviour, original, fixed) for every corpus program `cslint fix`
    changes with safe fixes only (behaviour None: the corpus lacks one)."""
    found = []
    for rule in all_rules():
        for index, example in enumerate(rule.INVALID):
            result = check_source(example.code, presets=rule.EXAMPLE_PRESETS)
            fix = fix_source(example.code, "<example>.py", result.findings, unsafe=False)
            if fix.applied:
                found.append((f"{rule.CODE}-{index}", example.behaviour, example.code, fix.fixed))
    for name in SEED_FIXTURES + ("mpi_drain",):
        path = fixture_path(name)
        with open(path, encoding="utf-8") as handle:
            source = handle.read()
        fix = fix_source(source, path, seed_findings(name, path, source), unsafe=False)
        if fix.applied:
            found.append((name, SEED_BEHAVIOURS.get(name), source, fix.fixed))
    return found


SAFE = _safe_fixes()
GLOO = [pytest.param(*case[1:], id=case[0]) for case in SAFE if case[1] is None or case[1].backend == "gloo"]
MPI = [pytest.param(*case[1:], id=case[0]) for case in SAFE if case[1] is not None and case[1].backend == "mpi"]


def test_the_corpus_has_safe_fixes_for_both_backends():
    assert len(GLOO) >= 4 and len(MPI) >= 2


def _compare(results: dict, behaviour, exits: str = "") -> None:
    assert sorted(results) == list(range(RANKS)), f"ranks missing: {sorted(results)} {exits}"
    for rank, scenarios in results.items():
        assert isinstance(scenarios, list), f"rank {rank} failed: {scenarios}"
        for scenario, outcome in zip(behaviour.scenarios, scenarios):
            assert outcome["participants"] == sorted(scenario.takes), \
                f"the scenario {scenario.setup!r} says ranks {scenario.takes} reach the collective"
            assert outcome["fixed"] == outcome["reference"], \
                f"rank {rank}, scenario {scenario.setup!r}: fixed {outcome['fixed']} != intended {outcome['reference']}"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("behaviour,original,fixed", GLOO)
def test_safe_fix_keeps_every_rank_s_values_on_gloo(behaviour, original, fixed, tmp_path):
    torch = pytest.importorskip("torch")
    assert torch.__version__.startswith("2.13.0")
    import multiprocessing

    assert behaviour is not None, "a safe fix of the corpus has no behaviour to run"
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    store = str(tmp_path / "store")
    procs = fork_ranks(context, gloo_rank, [(r, RANKS, store, original, fixed, behaviour, queue) for r in range(RANKS)])
    results = {}
    try:
        for _ in range(RANKS):
            rank, value = queue.get(timeout=90)
            results[rank] = value
    except Exception:  # queue.Empty: a rank hung
        pass
    finally:
        for proc in procs:
            proc.join(timeout=5)
            if proc.is_alive():
                proc.kill()
                proc.join()
    _compare(results, behaviour, f"(exit codes {[p.exitcode for p in procs]}; a failing rank's traceback is above)")


@pytest.mark.timeout(120)
@pytest.mark.skipif(not os.path.exists(MPIEXEC), reason="mpiexec (mpich wheel) is not installed")
@pytest.mark.parametrize("behaviour,original,fixed", MPI)
def test_safe_fix_keeps_every_rank_s_values_on_mpi(behaviour, original, fixed, tmp_path):
    case = tmp_path / "case.json"
    case.write_text(json.dumps({"original": original, "fixed": fixed, "call": behaviour.call,
                                "observe": behaviour.observe,
                                "scenarios": [[s.setup, list(s.takes)] for s in behaviour.scenarios]}))
    env = dict(os.environ, MPIEXEC_TIMEOUT="60")
    proc = start_bounded([MPIEXEC, "-n", str(RANKS), sys.executable, os.path.join(HERE, "fix_behaviour.py"),
                          str(case), str(tmp_path)], 90, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    try:
        output, _ = proc.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        kill_session(proc)
        output, _ = proc.communicate()
    finally:
        kill_session(proc)
    results = {}
    for rank in range(RANKS):
        path = tmp_path / f"rank{rank}.json"
        if path.exists():
            results[rank] = json.loads(path.read_text())["scenarios"]
    assert proc.returncode == 0, output.decode(errors="replace")[-2000:]
    _compare(results, behaviour)
