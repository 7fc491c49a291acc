"""`--format sarif`: valid against the published SARIF 2.1.0 schema, and carries what code scanning needs."""

from __future__ import annotations

import copy
import json
import os

import jsonschema
import pytest
from report_samples import early_exit_finding, sample_result, write_sample

from cslint.baseline import fingerprint
from cslint.model import CheckResult
from cslint.report import render

SCHEMA_PATH = os.path.join(os.path.dirname(__file__), "data", "sarif-schema-2.1.0.json")


@pytest.fixture(scope="module")
def validator():
    with open(SCHEMA_PATH, encoding="utf-8") as handle:
        schema = json.load(handle)
    assert schema["title"].startswith("Static Analysis Results Format (SARIF) Version 2.1.0")
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())


def _log(result: CheckResult, root: str) -> dict:
    return json.loads(render(result, "sarif", root=root))


def test_sample_log_is_schema_valid(validator, tmp_path):
    path = write_sample(str(tmp_path))
    log = _log(sample_result(path), str(tmp_path))
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors)


def test_empty_log_is_schema_valid(validator, tmp_path):
    log = _log(CheckResult(files=0), str(tmp_path))
    assert not list(validator.iter_errors(log))
    assert log["runs"][0]["results"] == []


def test_validator_rejects_a_broken_log(validator, tmp_path):
    path = write_sample(str(tmp_path))
    log = _log(sample_result(path), str(tmp_path))
    broken = copy.deepcopy(log)
    broken["runs"][0]["results"][0]["level"] = "fatal"
    assert list(validator.iter_errors(broken))
    broken = copy.deepcopy(log)
    del broken["version"]
    assert list(validator.iter_errors(broken))


def test_result_content(tmp_path):
    path = write_sample(str(tmp_path))
    finding = early_exit_finding(path)
    log = _log(CheckResult(files=1, findings=[finding]), str(tmp_path))
    run = log["runs"][0]
    assert log["version"] == "2.1.0"
    driver = run["tool"]["driver"]
    assert driver["name"] == "cslint"
    rule_ids = [rule["id"] for rule in driver["rules"]]
    assert "CSL102" in rule_ids
    (result,) = run["results"]
    assert result["ruleId"] == "CSL102"
    assert driver["rules"][result["ruleIndex"]]["id"] == "CSL102"
    assert result["level"] == "error"
    assert result["message"]["text"] == finding.message
    physical = result["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"] == {"uri": "executor.py", "uriBaseId": "%SRCROOT%"}
    assert physical["region"] == {"startLine": 9, "startColumn": 17, "endLine": 9, "endColumn": 66}
    assert result["locations"][0]["logicalLocations"] == [{"fullyQualifiedName": "Executor._can_queue", "kind": "function"}]
    related = result["relatedLocations"]
    assert [(r["physicalLocation"]["region"]["startLine"], r["message"]["text"]) for r in related] == [
        (link.line, link.note) for link in finding.chain
    ]
    flow = result["codeFlows"][0]["threadFlows"][0]["locations"]
    assert [step["kinds"][0] for step in flow] == ["source", "condition", "collective"]
    assert result["partialFingerprints"] == {"cslintFingerprint/v1": fingerprint(finding, str(tmp_path))}
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.as_uri() + "/"


def test_fingerprint_survives_line_shift(tmp_path):
    path = write_sample(str(tmp_path))
    before = _log(CheckResult(files=1, findings=[early_exit_finding(path)]), str(tmp_path))
    after = _log(CheckResult(files=1, findings=[early_exit_finding(path, line=29, guard_line=27)]), str(tmp_path))
    get = lambda log: log["runs"][0]["results"][0]["partialFingerprints"]
    assert get(before) == get(after)


def test_rules_carry_docs_from_the_rule_classes(tmp_path):
    rules = pytest.importorskip("cslint.rules")
    catalog = {rule.CODE: rule for rule in rules.all_rules()}
    if not catalog:
        pytest.skip("no rules registered yet")
    log = _log(CheckResult(files=0), str(tmp_path))
    descriptors = {d["id"]: d for d in log["runs"][0]["tool"]["driver"]["rules"]}
    for code, rule in catalog.items():
        descriptor = descriptors[code]
        assert descriptor["name"] == rule.NAME
        assert descriptor["shortDescription"]["text"] == rule.SUMMARY
        assert descriptor["help"]["markdown"] == rule.DOC.strip()


def test_file_outside_root_gets_absolute_uri(validator, tmp_path):
    inner = tmp_path / "inner"
    inner.mkdir()
    path = write_sample(str(tmp_path))
    log = _log(CheckResult(files=1, findings=[early_exit_finding(path)]), str(inner))
    location = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": (tmp_path / "executor.py").as_uri()}
    assert not list(validator.iter_errors(log))
