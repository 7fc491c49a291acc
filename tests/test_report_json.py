"""`--format json` is exactly the object of the JSON contract in docs/design.md."""

from __future__ import annotations

import json

from report_samples import sample_result, write_sample

from cslint.model import CheckResult
from cslint.report import render

CONTRACT_KEYS = {"code", "path", "line", "column", "end_line", "end_column", "message", "collective", "group", "chain", "fix"}


def test_json_is_the_contract_object(tmp_path):
    path = write_sample(str(tmp_path))
    result = sample_result(path)
    document = json.loads(render(result, "json", root=str(tmp_path)))
    assert document == result.to_json()
    assert document["version"] == 1 and document["files"] == 3
    for finding in document["findings"]:
        assert CONTRACT_KEYS <= set(finding)
        for link in finding["chain"]:
            assert set(link) == {"path", "line", "note"}
    first = document["findings"][0]
    assert (first["code"], first["line"], first["column"]) == ("CSL102", 9, 17)
    assert {k: first["fix"][k] for k in ("strategy", "safe")} == {"strategy": "always-enter", "safe": False}
    assert document["errors"] == [{"path": result.errors[0].path, "message": "cannot read: permission denied"}]


def test_empty_result():
    assert json.loads(render(CheckResult(), "json")) == {"version": 1, "files": 0, "findings": [], "errors": []}
