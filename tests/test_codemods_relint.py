"""Real findings in, fixed code out, re-lint: the fixed sites are gone and nothing new appears.

Also runs the two libcst commands (in-process and through `python -m libcst.tool`),
which get their findings from `cslint.api.check_paths` themselves.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "fixtures", "codemods"))

import libcst as cst
from codemod_cases import fixture_path, seed_findings
from libcst.codemod import CodemodContext

from codemods import driver
from codemods.always_enter import AlwaysEnterCommand
from codemods.consensus_gate import ConsensusGateCommand

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "codemods")


def _check(paths):
    from cslint.api import check_paths

    return check_paths([str(p) for p in paths], cache=False)


def _copy_fixture(tmp_path, name):
    for item in (f"{name}.py", "pyproject.toml"):
        shutil.copy(os.path.join(FIXTURES, item), tmp_path / item)
    return tmp_path / f"{name}.py"


def _site(finding):
    return (finding.function, finding.callee, finding.code)


# fill_gate has two rank-local exits before its gather: the finding names the nearest, and its fix
# facts list the other (`other_exits`), which always-enter defers with it in the same pass
@pytest.mark.parametrize("name", ["fill_gate", "pp_transfer"])
def test_relint_after_fix_reports_nothing_at_fixed_sites_and_nothing_new(tmp_path, name):
    target = _copy_fixture(tmp_path, name)
    before = _check([target])
    if not before.findings:
        pytest.skip("the analyzer reports nothing for this fixture yet")
    plan = driver.plan_fixes(before)
    assert plan.applied, [r.reason for r in plan.refused]
    driver.write_fixes(plan)
    after = _check([target])
    fixed_sites = {_site(a.finding) for a in plan.applied}
    remaining = {_site(f) for f in after.findings}
    assert not (remaining & fixed_sites), "a fixed site is still reported"
    assert remaining <= {_site(f) for f in before.findings}, "the fix introduced new findings"
    # idempotent: fixing the fixed file again changes nothing
    again = driver.plan_fixes(after)
    assert not any(f.changed for f in again.files)


def test_a_consensus_that_would_drop_a_ranks_batch_is_refused(tmp_path):
    """`batch = self._schedule(); if not batch: continue`: agreeing on the exit would make a rank that
    holds a batch skip the code that handles it (its batch, already taken off the queue, would be
    lost); always-enter finds no neutral batch either, so the finding is refused with both reasons."""
    target = _copy_fixture(tmp_path, "event_loop")
    before = _check([target])
    plan = driver.plan_fixes(before)
    assert not plan.applied
    reasons = " ".join(r.reason for r in plan.refused)
    assert "a rank that still holds `batch` would skip the code that handles it" in reasons
    assert "no neutral value" in reasons


@pytest.mark.parametrize("command_class, strategy", [(AlwaysEnterCommand, "always-enter"),
                                                     (ConsensusGateCommand, "consensus")])
def test_libcst_command_equals_the_driver(monkeypatch, command_class, strategy):
    name = "fill_gate" if strategy == "always-enter" else "pp_transfer"
    path = fixture_path(name)
    with open(path, encoding="utf-8") as handle:
        source = handle.read()
    findings = seed_findings(name, path, source)
    monkeypatch.setattr(driver, "findings_for_file", lambda p: findings)
    command = command_class(CodemodContext(filename=path))
    new_module = command.transform_module(cst.parse_module(source))
    expected = driver.fix_source(source, path, findings, strategy=strategy).fixed
    assert new_module.code == expected != source
    assert any("fixed (" in w for w in command.context.warnings)


def test_libcst_tool_discovers_the_commands_and_runs_check_paths(tmp_path):
    target = _copy_fixture(tmp_path, "pp_transfer")
    original = target.read_text(encoding="utf-8")
    reported = _check([target]).findings
    proc = subprocess.run(
        [sys.executable, "-m", "libcst.tool", "codemod", "consensus_gate.ConsensusGateCommand",
         "--no-format", "--hide-progress", "-j", "1", str(target)],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Transformed 1 files successfully" in proc.stderr
    fixed = target.read_text(encoding="utf-8")
    if reported:
        assert "if any(self.dist.pp_allgather(bool(need_check))):" in fixed
    else:  # nothing reported, nothing changed
        assert fixed == original


def test_fix_finds_the_call_on_a_line_with_non_ascii_text(tmp_path):
    # Finding columns count characters, as libcst positions do; with byte
    # columns the fix was refused as "the finding does not match the source".
    target = tmp_path / "m.py"
    target.write_text('import torch.distributed as dist\ndef f(t, rank):\n'
                      '    if rank == 0:\n        note = "données"; dist.all_reduce(t)\n', encoding="utf-8")
    plan = driver.plan_fixes(_check([target]))
    assert plan.applied and not plan.refused, [r.reason for r in plan.refused]
    driver.write_fixes(plan)
    assert 'note = "données"' in target.read_text(encoding="utf-8")
    assert not _check([target]).findings
