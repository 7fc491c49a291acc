"""`python -m tensorrt_llm_patch validate`: bad configurations and one end-to-end run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tensorrt_llm_patch import validate
from tensorrt_llm_patch.validate_runner import (
    CAUGHT,
    COMPLETED,
    RunConfig,
    RunResult,
    find_mpiexec,
)

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("argv,code,text", [
    (["--ranks", "1"], validate.EXIT_USAGE, "at least 2 ranks"),
    (["--backend", "ucx"], validate.EXIT_USAGE, "unknown backend"),
    (["--fill-gate", "maybe"], validate.EXIT_USAGE, "choose on or off"),
    (["--draft-len", "-1"], validate.EXIT_USAGE, "--draft-len"),
    (["--ranks", "two"], validate.EXIT_USAGE, "invalid int value"),
    (["--tree", "/nonexistent/replica"], validate.EXIT_NO_TREE, "not a replica tree"),
])
def test_bad_configuration_has_a_message_and_a_distinct_status(argv, code, text, capsys):
    assert validate.main(argv) == code
    err = capsys.readouterr().err
    assert text in err and "Traceback" not in err


def test_nccl_without_gpus(capsys, monkeypatch):
    monkeypatch.setattr(validate, "_cuda_gpus", lambda: 0)
    assert validate.main(["--backend", "nccl", "--ranks", "2"]) == validate.EXIT_BACKEND
    assert "one CUDA GPU per rank" in capsys.readouterr().err


def test_mpiexec_missing(capsys, monkeypatch):
    monkeypatch.setattr(validate, "find_mpiexec", lambda: None)
    assert validate.main(["--backend", "mpi"]) == validate.EXIT_BACKEND
    assert "mpiexec not found" in capsys.readouterr().err


def test_dispatch_through_package_main():
    proc = subprocess.run([sys.executable, "-m", "tensorrt_llm_patch", "validate", "--ranks", "1"],
                          check=False, capture_output=True, text=True, cwd=str(ROOT), timeout=60)
    assert proc.returncode == validate.EXIT_USAGE, proc.stderr
    assert "at least 2 ranks" in proc.stderr


@pytest.mark.skipif(find_mpiexec() is None, reason="mpiexec not found")
@pytest.mark.timeout(90)
def test_end_to_end_unpatched_hang_is_caught_with_a_timeline(tmp_path, capsys):
    code = validate.main(["--ranks", "2", "--draft-len", "3", "--fill-gate", "off", "--no-patched",
                          "--no-findings", "--sanitizer-timeout", "1", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == validate.EXIT_OK, out
    assert "hang caught" in out and "_can_queue" in out
    svg = tmp_path / "mpi-adp2-asym-k3-gateoff" / "unpatched" / "timeline.svg"
    assert svg.is_file() and "<svg" in svg.read_text()


def _result(outcome, outputs=None, sites=None):
    result = RunResult(outcome=outcome, returncode=0, seconds=1.0, outputs=outputs or {})
    if sites:
        class _Diagnosis:
            def diverging_functions(self):
                return sites
        result.diagnosis = _Diagnosis()
    return result


def test_verdict_and_table():
    reference = {"0": [1, 2], "1": [3, 4]}
    hang = RunConfig("mpi", 2, 3, "off")
    fine = RunConfig("mpi", 2, 2, "off")
    caught = _result(CAUGHT, sites={0: "PyExecutor._all_ranks_done", 1: "PyExecutor._can_queue"})
    good = _result(COMPLETED, dict(reference))
    wrong = _result(COMPLETED, {"0": [1, 2], "1": [3, 5]})
    assert validate._verdict(hang, caught, good, reference) == []
    assert validate._verdict(fine, good, good, reference) == []
    assert "expected a caught hang" in validate._verdict(hang, good, good, reference)[0]
    assert "tokens differ" in validate._verdict(hang, caught, wrong, reference)[0]
    assert "patched: expected to complete" in validate._verdict(hang, caught, caught, reference)[0]
    rows = [{"config": hang, "unpatched": caught, "patched": good, "reference": reference, "problems": []},
            {"config": fine, "unpatched": good, "patched": wrong, "reference": reference,
             "problems": ["patched: tokens differ"]}]
    table = validate.render_table(rows).splitlines()
    assert "_all_ranks_done(0); _can_queue(1)" in table[2] and table[2].rstrip().endswith("ok")
    assert "identical/DIFFER" in table[3] and table[3].rstrip().endswith("FAIL")


def test_matrix_covers_the_issue():
    class Args:
        matrix, backend = True, "mpi"
    configs = validate.configs_for(Args)
    assert {c.ranks for c in configs} == {2, 4} and {c.draft_len for c in configs} == {2, 3}
    assert {c.fill_gate for c in configs if not c.pp} == {"on", "off"}
    assert any(c.pp for c in configs) and any(c.spec == "sym" for c in configs)
    assert {c.expect_hang for c in configs} == {True, False}


def test_the_matrix_runs_every_scenario_at_every_rank_count():
    class Args:
        matrix, backend, ranks = True, "mpi", None
    configs = validate.configs_for(Args)
    scenarios = {(c.scenario, c.ranks) for c in configs if c.scenario}
    assert scenarios == {(s, r) for s in ("drain", "fault", "overlap") for r in (2, 4)}
    assert all(c.expect_hang and not c.pp for c in configs if c.scenario)
    fault = next(c for c in configs if c.scenario == "fault" and c.ranks == 4)
    assert fault.scenario_args() == ["--fault-request", "5"] and fault.faulting_rank == 1
    assert next(c for c in configs if c.scenario == "drain").scenario_args() == ["--shutdown", "drain"]


def test_the_fault_scenario_accepts_failures_only_on_the_faulting_rank():
    reference = {"0": [1, 2], "1": [3, 4], "2": [5, 6], "3": [7, 8]}
    fault = RunConfig("mpi", 2, 2, "off", False, "sym", "fault")  # request 3 fails, on rank 1
    owners = {"0": 0, "1": 1, "2": 0, "3": 1}

    def run(outputs):
        result = _result(COMPLETED, outputs)
        result.owners = owners
        return result

    assert validate.tokens_as_expected(fault, run({**reference, "1": [-1], "3": [-1]}), reference)
    assert validate.tokens_as_expected(fault, run({**reference, "3": [-1]}), reference)
    assert not validate.tokens_as_expected(fault, run(dict(reference)), reference)  # the fault did not show
    assert not validate.tokens_as_expected(fault, run({**reference, "2": [-1]}), reference)  # rank 0's request
    assert not validate.tokens_as_expected(fault, run({**reference, "3": [-1], "0": [9, 9]}), reference)
    plain = RunConfig("mpi", 2, 2, "off")
    assert not validate.tokens_as_expected(plain, run({**reference, "3": [-1]}), reference)
    assert validate._tokens_cell(fault, run({**reference, "3": [-1]}), reference) == "identical (1 failed by the fault)"


@pytest.mark.skipif(find_mpiexec() is None, reason="mpiexec not found")
@pytest.mark.timeout(240)
@pytest.mark.parametrize("scenario", ["drain", "overlap"])
def test_a_scenario_hangs_unpatched_and_completes_patched(tmp_path, capsys, scenario):
    code = validate.main(["--ranks", "2", "--spec", "sym", "--draft-len", "2", "--fill-gate", "off",
                          "--scenario", scenario, "--no-findings", "--sanitizer-timeout", "1",
                          "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == validate.EXIT_OK, out
    (row,) = [line for line in out.splitlines() if line.startswith(f"mpi adp2 sym k=2 {scenario}")]
    assert "hang caught" in row and "completed  -/identical" in row and row.rstrip().endswith("ok")
