"""Baselines: fingerprints ignore line numbers; new findings still show; bad files fail clearly."""

from __future__ import annotations

import json

import pytest
from report_samples import branch_finding, early_exit_finding, write_sample

from cslint.baseline import (
    BaselineError,
    filter_new,
    fingerprint,
    fingerprints,
    load_baseline,
    normalise_condition,
    write_baseline,
)
from cslint.config import ConfigError
from cslint.model import CheckResult


def test_fingerprint_ignores_position_but_not_identity(tmp_path):
    path = write_sample(str(tmp_path))
    base = fingerprint(early_exit_finding(path), str(tmp_path))
    assert fingerprint(early_exit_finding(path, line=40, guard_line=38), str(tmp_path)) == base
    assert fingerprint(early_exit_finding(path, condition="not self.waiting_queue"), str(tmp_path)) != base
    other_function = early_exit_finding(path)
    other_function.function = "Executor._other"
    assert fingerprint(other_function, str(tmp_path)) != base
    other_collective = early_exit_finding(path)
    other_collective.collective = "tp_gather"
    assert fingerprint(other_collective, str(tmp_path)) != base
    other_code = early_exit_finding(path)
    other_code.code = "CSL101"
    assert fingerprint(other_code, str(tmp_path)) != base


def test_fingerprint_path_is_relative_to_root(tmp_path):
    a = tmp_path / "a"
    b = tmp_path / "b"
    a.mkdir()
    b.mkdir()
    fa = fingerprint(early_exit_finding(write_sample(str(a))), str(a))
    fb = fingerprint(early_exit_finding(write_sample(str(b))), str(b))
    assert fa == fb  # same relative path in two checkouts
    assert fingerprint(early_exit_finding(write_sample(str(a), "other.py")), str(a)) != fa


def test_condition_normalisation():
    assert normalise_condition("not   self.x\n  and y") == "not self.x and y"
    assert normalise_condition("(a  or b)") == "a or b"
    assert normalise_condition("a +") == "a +"  # not an expression: whitespace collapsed only
    assert normalise_condition("") == ""


def test_duplicates_in_one_function_get_occurrence_indices(tmp_path):
    path = write_sample(str(tmp_path))
    first = early_exit_finding(path, line=9)
    second = early_exit_finding(path, line=10)
    prints = [p for _, p in fingerprints([second, first], str(tmp_path))]
    assert prints[0].endswith(":0") and prints[1].endswith(":1")
    assert prints[0].rsplit(":", 1)[0] == prints[1].rsplit(":", 1)[0]


def test_write_load_filter_round_trip(tmp_path):
    path = write_sample(str(tmp_path))
    result = CheckResult(files=1, findings=[early_exit_finding(path), branch_finding(path)])
    baseline_file = tmp_path / "cslint-baseline.json"
    write_baseline(result, str(baseline_file))
    document = json.loads(baseline_file.read_text())
    assert document["version"] == 1 and document["tool"] == "cslint"
    assert [e["path"] for e in document["findings"]] == ["executor.py", "executor.py"]
    baseline = load_baseline(str(baseline_file))
    assert len(baseline) == 2
    assert filter_new(result, baseline).findings == []

    # lines shift above both findings: still nothing new
    shifted = CheckResult(files=1, findings=[early_exit_finding(path, line=19, guard_line=17), branch_finding(path)])
    assert filter_new(shifted, baseline).findings == []

    # a changed condition is a new finding; a second identical finding is new too
    changed = early_exit_finding(path, condition="len(self.active_requests) == 0")
    duplicate = early_exit_finding(path, line=12)
    new = filter_new(CheckResult(files=1, findings=[changed, early_exit_finding(path), duplicate]), baseline)
    assert sorted((f.line, f.condition) for f in new.findings) == [(9, "len(self.active_requests) == 0"), (12, "not self.active_requests")]


def test_baseline_paths_are_relative_to_the_baseline_file(tmp_path, monkeypatch):
    project = tmp_path / "project"
    project.mkdir()
    path = write_sample(str(project))
    result = CheckResult(files=1, findings=[early_exit_finding(path)])
    write_baseline(result, str(project / "baseline.json"))
    monkeypatch.chdir(tmp_path)  # a different working directory must not matter
    baseline = load_baseline("project/baseline.json")
    relative_finding = early_exit_finding("project/executor.py")
    assert filter_new(CheckResult(files=1, findings=[relative_finding]), baseline).findings == []


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "invalid JSON"),
        ("[]", "not a cslint baseline"),
        ('{"tool": "cslint", "version": 99, "findings": []}', "unsupported baseline version"),
        ('{"tool": "cslint", "version": 1, "findings": {}}', "must be a list"),
        ('{"tool": "cslint", "version": 1, "findings": [{"code": "CSL101"}]}', "finding #1"),
    ],
)
def test_bad_baseline_files_fail_clearly(tmp_path, content, message):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    with pytest.raises(BaselineError, match=message) as info:
        load_baseline(str(bad))
    assert isinstance(info.value, ConfigError)  # the CLI prints ConfigError and exits 2
    assert str(bad) in str(info.value)


def test_missing_baseline_file(tmp_path):
    with pytest.raises(BaselineError, match="--write-baseline"):
        load_baseline(str(tmp_path / "nope.json"))
