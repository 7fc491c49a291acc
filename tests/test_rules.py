"""Every rule's VALID/INVALID examples run through the whole engine and the
codemods (Fixit style): an INVALID example gives one finding with the expected
message, and `cslint fix --unsafe-fixes` gives the expected source with the
expected label (or refuses with the expected reason); its docs follow the
house format."""

import re

import pytest

from cslint.api import check_source
from cslint.rules import Invalid, all_rules, get_rule

from codemods.driver import fix_source

RULES = all_rules()
SECTIONS = ["## What it does", "## Why is this bad?", "## Example", "## Use instead"]


def _cases(attr):
    for rule in RULES:
        for index, example in enumerate(getattr(rule, attr)):
            yield pytest.param(rule, example, id=f"{rule.CODE}-{attr.lower()}-{index}")


def _checked(rule, example: Invalid):
    result = check_source(example.code, presets=rule.EXAMPLE_PRESETS)
    mine = [f for f in result.findings if f.code == rule.CODE]
    return result, mine


@pytest.mark.parametrize("rule,example", list(_cases("INVALID")))
def test_invalid_examples_give_the_expected_message(rule, example):
    result, mine = _checked(rule, example)
    assert [f.message for f in mine] == [example.message], f"{rule.CODE}:\n{example.code}\ngot {result.findings}"


@pytest.mark.parametrize("rule,example", list(_cases("INVALID")))
def test_invalid_examples_give_the_expected_fix(rule, example):
    result, mine = _checked(rule, example)
    fix = fix_source(example.code, "<snippet>.py", result.findings, unsafe=True)
    if example.fixed is None:
        assert not fix.applied and fix.fixed == example.code
        assert [r.reason for r in fix.refused if r.finding in mine] == [example.refused]
        return
    assert fix.fixed == example.fixed
    (applied,) = [a for a in fix.applied if a.finding in mine]
    assert ("safe" if applied.safe else "unsafe") == example.label
    compile(fix.fixed, "<fixed>", "exec")


@pytest.mark.parametrize("rule,example", list(_cases("INVALID")))
def test_check_and_fix_agree_on_strategy_and_label(rule, example):
    """`cslint fix` applies one of the strategies `cslint check` lists, with
    the label it lists; a later one only when the earlier ones do not fit."""
    result, mine = _checked(rule, example)
    (finding,) = mine
    offered = [(o.strategy, o.safe) for o in finding.fix.options] if finding.fix else []
    fix = fix_source(example.code, "<snippet>.py", result.findings, unsafe=True)
    for applied in fix.applied:
        assert (applied.strategy, applied.safe) in offered
        if (applied.strategy, applied.safe) != offered[0]:
            assert applied.reason.startswith(f"auto picked {applied.strategy} because {offered[0][0]} does not fit")
    if not offered:
        assert fix.refused and fix.refused[0].reason == rule.no_fix_reason(finding)
    for held in fix_source(example.code, "<snippet>.py", result.findings, unsafe=False).held_back:
        assert (held.strategy, held.safe) in offered and not held.safe


@pytest.mark.parametrize("rule,example", list(_cases("INVALID")))
def test_safe_fixes_come_with_a_behaviour_to_run(rule, example):
    assert (example.label == "safe") == (example.behaviour is not None)


@pytest.mark.parametrize("rule,snippet", list(_cases("VALID")))
def test_valid_examples_are_not_flagged(rule, snippet):
    result = check_source(snippet, presets=rule.EXAMPLE_PRESETS)
    flagged = [f for f in result.findings if f.code == rule.CODE]
    assert not flagged, f"{rule.CODE} false positive:\n{snippet}\n{[f.message for f in flagged]}"


@pytest.mark.parametrize("rule", RULES, ids=[r.CODE for r in RULES])
def test_rule_metadata(rule):
    assert re.fullmatch(r"CSL\d{3}", rule.CODE)
    assert re.fullmatch(r"[a-z]+(-[a-z]+)*", rule.NAME)
    assert rule.SUMMARY and "\n" not in rule.SUMMARY
    positions = [rule.DOC.find(section) for section in SECTIONS]
    assert all(p >= 0 for p in positions), f"{rule.CODE} docs lack a section"
    assert positions == sorted(positions)
    assert rule.VALID and rule.INVALID
    assert get_rule(rule.CODE.lower()) is rule


def test_codes_are_unique_and_cover_the_design():
    codes = [r.CODE for r in RULES]
    assert len(codes) == len(set(codes))
    assert {"CSL001", "CSL101", "CSL102", "CSL103", "CSL104"} <= set(codes)
    assert get_rule("CSL999") is None


def test_findings_fill_every_consumer_field():
    snippet = RULES[[r.CODE for r in RULES].index("CSL102")].INVALID[0].code
    (finding,) = [f for f in check_source(snippet).findings if f.code == "CSL102"]
    assert finding.function == "Worker.flush"
    assert finding.condition == "not self.pending"
    assert finding.guard_kind == "early-exit"
    assert finding.guard is not None and finding.guard.line == finding.line - 1
    assert finding.callee == "dist.all_reduce" and finding.collective == "all_reduce"
    assert finding.api == "torch" and finding.group == "world"
    assert finding.source == "dist.get_rank()"
    kinds = [link.kind for link in finding.chain]
    assert kinds[0] == "collective" and kinds[-1] == "source" and "condition" in kinds
    # an in-place all_reduce of a plain tensor: the skipping rank reduces a zero tensor, safe
    assert finding.fix is not None and finding.fix.strategy == "always-enter" and finding.fix.safe is True
    assert [o.strategy for o in finding.fix.alternatives] == ["consensus"]
    facts = finding.fix_facts
    assert (facts.receiver, facts.group_expr, facts.api, facts.direct, facts.join) == ("dist", "", "torch", True,
                                                                                        "identity")
    assert facts.payload.text == "t" and facts.payload.effects == "pure"
    assert facts.neutral.text == "torch.zeros_like(__cslint_payload__)"
    assert facts.agreement.setup[1] == "dist.all_reduce(__cslint_flag__, op=dist.ReduceOp.MAX)"
    assert finding.column >= 1 and finding.end_column > finding.column


def test_columns_count_characters_not_bytes():
    # ast reports UTF-8 byte offsets; a non-ASCII string earlier on the line
    # must not shift the column (editors, SARIF and the codemods count characters).
    source = 'import torch.distributed as dist\ndef f(t, rank):\n    if rank == 0:\n        note = "données"; dist.all_reduce(t)\n'
    (finding,) = check_source(source).findings
    line = source.splitlines()[3]
    assert finding.column == line.index("dist.all_reduce") + 1
    assert finding.end_column == line.index("(t)") + len("(t)") + 1
    assert (finding.guard.line, finding.guard.column) == (3, 5)


def test_sarif_pylint_and_the_cli_take_rule_names_from_the_rules_alone(capsys):
    import os

    from cslint import pylint_plugin
    from cslint.cli import main
    from cslint.model import CheckResult
    from cslint.report.sarif import sarif_log

    descriptors = {d["id"]: d for d in sarif_log(CheckResult())["runs"][0]["tool"]["driver"]["rules"]}
    assert main(["rules"]) == 0
    listed = capsys.readouterr().out
    for rule in RULES:
        assert descriptors[rule.CODE]["name"] == rule.NAME
        assert descriptors[rule.CODE]["shortDescription"]["text"] == rule.SUMMARY
        assert pylint_plugin.SYMBOL_BY_CODE[rule.CODE] == f"csl-{rule.NAME}"
        assert any(line.split()[:2] == [rule.CODE, rule.NAME] for line in listed.splitlines())
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for module in ("cslint/report/sarif.py", "cslint/pylint_plugin.py"):
        with open(os.path.join(root, module), encoding="utf-8") as handle:
            text = handle.read()
        spelled = [rule.NAME for rule in RULES if rule.NAME in text]
        assert spelled == [], f"{module} spells rule names itself: {spelled}"
