"""Reporting by root cause: one finding per guard, listing the collective call
sites it decides; ``--report per-site`` (setting ``report``) keeps one per site."""

import json
import textwrap

import pytest

from cslint.api import check_source
from cslint.cli import main
from cslint.config import ConfigError, settings_from_table
from cslint.rules.rootcause import group_by_root_cause

ONE_GUARD = """
    import torch.distributed as dist

    def step(t, u):
        if dist.get_rank() == 0:
            return
        dist.all_reduce(t)
        dist.all_reduce(u)
        dist.barrier()
        if dist.get_rank() == 1:
            dist.broadcast(t, src=1)
"""


def test_one_finding_per_guard_lists_the_sites_it_decides():
    result = check_source(textwrap.dedent(ONE_GUARD))
    assert [(f.code, f.line) for f in result.findings] == [("CSL102", 7), ("CSL101", 11)]
    first = result.findings[0]
    assert [site.line for site in first.sites] == [7, 8, 9]
    assert "2 more collective call sites (lines 8, 9)" in first.message
    assert result.findings[1].sites == []  # a guard deciding one site is reported as before
    per_site = check_source(textwrap.dedent(ONE_GUARD), report="per-site")
    assert [(f.code, f.line) for f in per_site.findings] == [("CSL102", 7), ("CSL102", 8), ("CSL102", 9),
                                                              ("CSL101", 11)]
    assert group_by_root_cause(per_site.findings) == result.findings


def test_the_report_option_and_setting(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "step.py").write_text(textwrap.dedent(ONE_GUARD), encoding="utf-8")
    main(["check", "--no-cache", "--output-format", "json", "step.py"])
    by_guard = json.loads(capsys.readouterr().out)["findings"]
    assert [f["line"] for f in by_guard] == [7, 11]
    assert [site["line"] for site in by_guard[0]["sites"]] == [7, 8, 9] and "sites" not in by_guard[1]
    main(["check", "--no-cache", "--output-format", "json", "--report-per-site", "step.py"])
    assert [f["line"] for f in json.loads(capsys.readouterr().out)["findings"]] == [7, 8, 9, 11]
    (tmp_path / "pyproject.toml").write_text('[tool.cslint]\nreport = "per-site"\n', encoding="utf-8")
    main(["check", "--no-cache", "--output-format", "json", "step.py"])
    assert [f["line"] for f in json.loads(capsys.readouterr().out)["findings"]] == [7, 8, 9, 11]
    with pytest.raises(ConfigError, match="report"):
        settings_from_table({"report": "per-guard"})
