"""`min-confidence`: findings the analysis doubts can be left out of a run,
counted in the summary and in the JSON, from the command line or the
configuration; the default reports everything."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from cslint.api import check_paths
from cslint.config import ConfigError, Settings, load_settings
from cslint.model import CONFIDENCE_LEVELS, CheckResult

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FIXTURES = os.path.join(HERE, "fixtures")


def _identity(finding):
    return (finding.path, finding.line, finding.column, finding.code)


@pytest.fixture(scope="module")
def everything():
    result = check_paths([FIXTURES], cache=False, report="per-site")
    levels = {f.confidence.level for f in result.findings if f.confidence is not None}
    assert len(levels) >= 2, f"the fixtures should hold findings of several confidence levels, not {levels}"
    return result


@pytest.mark.parametrize("level", CONFIDENCE_LEVELS)
def test_a_level_keeps_the_findings_at_or_above_it_and_counts_the_rest(everything, level):
    result = check_paths([FIXTURES], cache=False, report="per-site", min_confidence=level)
    wanted = [f for f in everything.findings if f.confidence is None or f.confidence.at_least(level)]
    assert sorted(map(_identity, result.findings)) == sorted(map(_identity, wanted))
    assert result.below_confidence == len(everything.findings) - len(wanted)
    data = result.to_json()
    assert data.get("below_confidence", 0) == result.below_confidence
    assert CheckResult.from_json(json.loads(json.dumps(data))).below_confidence == result.below_confidence


def test_the_default_reports_everything(everything):
    assert Settings().min_confidence == "low"
    assert everything.below_confidence == 0


def test_the_configuration_sets_it_and_refuses_an_unknown_level(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.cslint]\nmin-confidence = "high"\n')
    assert load_settings(str(tmp_path)).min_confidence == "high"
    (tmp_path / "pyproject.toml").write_text('[tool.cslint]\nmin-confidence = "sure"\n')
    with pytest.raises(ConfigError, match="min-confidence"):
        load_settings(str(tmp_path))


def test_the_command_line_says_how_many_were_left_out(everything, tmp_path):
    below = sum(1 for f in everything.findings if f.confidence is not None and not f.confidence.at_least("high"))
    assert below
    done = subprocess.run([sys.executable, "-m", "cslint.cli", "check", "--no-cache", "--report", "per-site",
                           "--min-confidence", "high", "--output-format", "concise", FIXTURES],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 1), done.stderr
    assert f"{below} finding{'s' if below != 1 else ''} below the confidence asked for not shown" in done.stdout
    bad = subprocess.run([sys.executable, "-m", "cslint.cli", "check", "--min-confidence", "sure", FIXTURES],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and "sure" in bad.stderr
