"""The text reporter: root-cause grouping, source snippet with carets, why-chain, summary."""

from __future__ import annotations

import os
import re

from report_samples import (
    branch_finding,
    early_exit_finding,
    sample_result,
    write_sample,
)

from cslint.model import CheckResult
from cslint.report import FORMATS, UnknownFormatError, render


def test_formats_are_the_cli_choices():
    from cslint.cli import build_parser

    check = build_parser()._subparsers._group_actions[0].choices["check"]
    (option,) = [a for a in check._actions if "--output-format" in a.option_strings]
    assert option.option_strings == ["--output-format", "--format"]  # --format stays an alias
    assert tuple(option.choices) == FORMATS == ("text", "concise", "json", "sarif", "github")


def test_unknown_format_is_a_clear_error():
    try:
        render(CheckResult(), "xml")
    except UnknownFormatError as exc:
        assert "xml" in str(exc) and "sarif" in str(exc)
    else:  # pragma: no cover - the assertion is the test
        raise AssertionError("render accepted an unknown format")


def test_groups_findings_by_shared_rank_local_source(tmp_path):
    path = write_sample(str(tmp_path))
    text = render(sample_result(path), "text", root=str(tmp_path))
    headers = [line for line in text.splitlines() if line.startswith("root cause:")]
    assert headers == ["root cause: `self.active_requests` at executor.py:4 (2 findings)"]
    # both collective findings sit under the one header, before the unrelated CSL002
    order = [m.group(1) for m in re.finditer(r"^executor\.py:\d+:\d+: (CSL\d+)", text, re.M)]
    assert order == ["CSL102", "CSL101", "CSL002"]
    assert text.rstrip().endswith("Found 3 findings in 1 file (1 root cause). 1 file could not be read.")


def test_distinct_sources_make_distinct_root_causes(tmp_path):
    path = write_sample(str(tmp_path))
    other = branch_finding(path)
    other.chain[-1] = type(other.chain[-1])(path, 3, "`self.dist` rank attribute", "source")
    other.source = "self.dist"
    result = CheckResult(files=1, findings=[early_exit_finding(path), other])
    text = render(result, "text", root=str(tmp_path))
    assert text.count("root cause:") == 2
    assert "(2 root causes)" in text


def test_snippet_shows_condition_and_caret_under_collective(tmp_path):
    path = write_sample(str(tmp_path))
    text = render(CheckResult(files=1, findings=[early_exit_finding(path)]), "text", root=str(tmp_path))
    lines = text.splitlines()
    call = next(i for i, l in enumerate(lines) if l.startswith("9 |"))
    caret_line = lines[call + 1]
    source_line = lines[call][len("9 | "):]
    start = source_line.index("self.dist.tp_allgather")
    carets = caret_line[len("  | "):]
    assert carets.index("^") == start
    assert carets.count("^") == len("self.dist.tp_allgather(len(self.active_requests))")
    assert carets.endswith("tp_allgather over tp")
    guard = next(i for i, l in enumerate(lines) if l.startswith("7 |"))
    underline = lines[guard + 1][len("  | "):]
    assert underline.index("-") == lines[guard].index("not self.active_requests") - len("7 | ")
    assert len(underline.strip().split(" ")[0]) == len("not self.active_requests")
    # the early exit between condition and call is shown and marked
    exit_index = next(i for i, l in enumerate(lines) if l.startswith("8 |"))
    exit_mark = lines[exit_index + 1][len("  | "):]
    assert exit_mark.index("-") == lines[exit_index].index("return True") - len("8 | ")
    assert exit_mark.strip() == "-" * len("return True") + " leaves early on some ranks"


def test_why_chain_is_an_indented_numbered_list(tmp_path):
    path = write_sample(str(tmp_path))
    text = render(CheckResult(files=1, findings=[early_exit_finding(path)]), "text", root=str(tmp_path))
    why = text.split("= why:\n", 1)[1].splitlines()[:3]
    assert why[0].strip() == "1. executor.py:9: tp_allgather over the tp group"
    assert why[1].strip() == "2. executor.py:7: early return on `not self.active_requests`"
    assert why[2].strip().startswith("3. executor.py:4: `self.active_requests`")
    assert "= fix: `cslint fix` can apply always-enter (unsafe)" in text


def test_far_apart_lines_are_elided(tmp_path):
    path = write_sample(str(tmp_path))
    finding = early_exit_finding(path, line=14, guard_line=7)
    text = render(CheckResult(files=1, findings=[finding]), "text", root=str(tmp_path))
    assert "... |" in text or ".. |" in text
    assert "\n10 |" not in text


def test_no_source_and_missing_file(tmp_path):
    path = write_sample(str(tmp_path))
    result = CheckResult(files=1, findings=[early_exit_finding(path)])
    plain = render(result, "text", root=str(tmp_path), show_source=False)
    assert " | " not in plain and "= why:" in plain
    gone = CheckResult(files=1, findings=[early_exit_finding(str(tmp_path / "missing.py"))])
    text = render(gone, "text", root=str(tmp_path))
    assert "missing.py:9:17: CSL102" in text and " | " not in text


def test_color_only_when_asked(tmp_path):
    path = write_sample(str(tmp_path))
    result = CheckResult(files=1, findings=[early_exit_finding(path)])
    assert "\x1b[" not in render(result, "text", root=str(tmp_path))
    colored = render(result, "text", root=str(tmp_path), color=True)
    assert "\x1b[1;31mCSL102\x1b[0m" in colored


def test_clean_run_summary():
    assert render(CheckResult(files=4), "text") == "All checks passed (4 files checked).\n"
    assert render(CheckResult(files=1), "text") == "All checks passed (1 file checked).\n"


def test_paths_outside_root_stay_absolute(tmp_path):
    inner = tmp_path / "inner"
    inner.mkdir()
    path = write_sample(str(tmp_path))
    text = render(CheckResult(files=1, findings=[early_exit_finding(path)]), "text", root=str(inner))
    assert text.startswith(f"root cause: `self.active_requests` at {tmp_path.as_posix()}/executor.py:4")


def test_docs_example_is_the_real_output(tmp_path):
    """docs/integrations.md shows this exact report; keep the two in step."""
    path = write_sample(str(tmp_path))
    text = render(CheckResult(files=1, findings=[early_exit_finding(path), branch_finding(path)]), "text", root=str(tmp_path))
    docs = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs", "integrations.md")
    with open(docs, encoding="utf-8") as handle:
        content = handle.read()
    start = content.index("    root cause: `self.active_requests`")
    end = content.index("    Found 2 findings in 1 file (1 root cause).\n", start) + len("    Found 2 findings in 1 file (1 root cause).\n")
    shown = "\n".join(line[4:] for line in content[start:end].splitlines()) + "\n"
    assert shown == text


def test_same_source_read_at_different_lines_is_one_root_cause(tmp_path):
    path = write_sample(str(tmp_path))
    other = branch_finding(path)
    other.chain[-1] = type(other.chain[-1])(path, 13, "`self.active_requests` is a per-rank request queue", "source")
    text = render(CheckResult(files=1, findings=[early_exit_finding(path), other]), "text", root=str(tmp_path))
    assert text.count("root cause:") == 1
    assert "root cause: `self.active_requests` at executor.py:4 (2 findings)" in text


def test_fix_line_lists_every_strategy_in_order_or_why_there_is_none(tmp_path):
    """The hint is what `cslint fix` will try, in its order: the first
    strategy, then each alternative; a finding with no strategy says why."""
    from cslint.api import check_paths
    from cslint.config import Settings

    source = tmp_path / "step.py"
    source.write_text(
        "import torch.distributed as dist\n\n\n"
        "def step(t):\n"
        "    if dist.get_rank() == 0:\n"
        "        dist.barrier()\n"
        "    for _ in range(dist.get_rank()):\n"
        "        dist.all_reduce(t)\n")
    result = check_paths([str(source)], settings=Settings(), cache=False)
    text = render(result, "text", root=str(tmp_path))
    branch = next(f for f in result.findings if f.code == "CSL101")
    strategies = [option.strategy for option in branch.fix.options]
    assert len(strategies) >= 2
    hint = [line.strip() for line in text.splitlines() if line.strip().startswith(("= fix:", "else "))]
    assert hint[0].startswith(f"= fix: `cslint fix` can apply {strategies[0]} (")
    assert hint[1].startswith(f"else {strategies[1]} (")
    loop = next(f for f in result.findings if f.code == "CSL103")
    assert loop.fix is None
    assert any(line.startswith("= fix: none automatic: ") and "CSL103" in line for line in hint)
