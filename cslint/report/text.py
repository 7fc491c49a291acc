"""`--format text`: findings grouped by root cause, with source and the "why" chain.

Layout (one block per finding, blocks grouped under the rank-local source they
share)::

    root cause: `self.active_requests` at executor.py:12 (2 findings)

    executor.py:42:17: CSL102 `tp_allgather` is skipped on ranks that return early ...
       |
    40 |         if not self.active_requests:
       |            ------------------------ rank-local condition
    41 |             return None
    42 |         sizes = self.dist.tp_allgather(len(self.active_requests))
       |                 ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ tp_allgather over tp
       |
       = why:
           1. executor.py:42: tp_allgather over the tp group
           2. executor.py:40: early return on `not self.active_requests`
           3. executor.py:12: `self.active_requests` is a per-rank request queue
       = fix: always-enter (unsafe): ...

    Found 2 findings in 1 file (1 root cause).
"""

from __future__ import annotations

import os
import re
from typing import Optional

from ..model import CheckResult, Finding
from ..rules import get_rule
from .common import Painter, display_path, plural, root_cause_key, source_lines, summary_line

# Lines of the collective call shown at most (long calls are cut).
_MAX_CALL_LINES = 3


def _underline(line_text: str, start_col: int, end_col: Optional[int]) -> tuple[str, int]:
    """Prefix (whitespace, tabs kept) and marker width for 1-based columns [start, end)."""
    start = max(start_col - 1, 0)
    start = min(start, len(line_text))
    stop = len(line_text.rstrip()) if end_col is None else min(max(end_col - 1, start + 1), len(line_text))
    prefix = "".join("\t" if ch == "\t" else " " for ch in line_text[:start])
    return prefix, max(stop - start, 1)


_WORD = re.compile(r"\w")


def _find_text(line_text: str, needle: str) -> int:
    """Index of `needle` in the line, preferring a whole-word match (so `mine` is not found in `determine`)."""
    start = 0
    while True:
        index = line_text.find(needle, start)
        if index < 0:
            return line_text.find(needle)
        before = line_text[index - 1] if index > 0 else " "
        after_index = index + len(needle)
        after = line_text[after_index] if after_index < len(line_text) else " "
        if not (_WORD.match(needle[0]) and _WORD.match(before)) and not (_WORD.match(needle[-1]) and _WORD.match(after)):
            return index
        start = index + 1


def _condition_columns(line_text: str, finding: Finding) -> tuple[int, Optional[int]]:
    """Where to underline the controlling condition on its line."""
    condition = " ".join(finding.condition.split())
    if condition:
        index = _find_text(line_text, condition)
        if index >= 0:
            return index + 1, index + 1 + len(condition)
    stripped = len(line_text) - len(line_text.lstrip())
    return stripped + 1, None


_EXIT_LABELS = {"early-exit": "leaves early on some ranks"}


def _condition_line(finding: Finding) -> Optional[int]:
    """The line of the controlling condition in the finding's own file, if known."""
    target = os.path.abspath(finding.path)
    for link in finding.chain:
        if link.kind == "condition" and os.path.abspath(link.path) == target:
            return link.line
    return finding.guard.line if _guard_here(finding) else None


def _guard_here(finding: Finding) -> bool:
    """Whether the finding's guard is in its own file: a finding reported
    at a caller's call keeps the callee's condition, in the callee's file
    (its chain's condition step says where)."""
    if finding.guard is None:
        return False
    target = os.path.abspath(finding.path)
    return all(os.path.abspath(link.path) == target for link in finding.chain if link.kind == "condition")


def _snippet(finding: Finding, paint: Painter, sources: Optional[dict] = None) -> list[str]:
    text = (sources or {}).get(finding.path)
    lines = tuple(text.decode("utf-8", "replace").splitlines()) if isinstance(text, bytes) else \
        tuple(text.splitlines()) if text is not None else source_lines(finding.path)
    if not lines or not (1 <= finding.line <= len(lines)):
        return []
    valid = lambda number: number is not None and 1 <= number <= len(lines)
    call_last = min(max(finding.end_line, finding.line), finding.line + _MAX_CALL_LINES - 1, len(lines))
    shown = set(range(finding.line, call_last + 1))
    cond_line = _condition_line(finding)
    cond_line = cond_line if valid(cond_line) and cond_line != finding.line else None
    exit_line = finding.guard.line if _guard_here(finding) else None
    exit_line = exit_line if valid(exit_line) and exit_line not in (cond_line, finding.line) and finding.guard_kind == "early-exit" else None
    for number in (cond_line, exit_line):
        if number is not None:
            shown.add(number)
    ordered = sorted(shown)
    width = len(str(ordered[-1]))
    gutter = paint("gutter", " " * width + " |")
    out = [gutter]
    previous = None
    for number in ordered:
        if previous is not None and number - previous == 2:
            out.append(paint("gutter", f"{previous + 1:>{width}} |") + " " + lines[previous].rstrip())
        elif previous is not None and number - previous > 2:
            out.append(paint("gutter", "." * width + " |"))
        text = lines[number - 1].rstrip()
        out.append(paint("gutter", f"{number:>{width}} |") + " " + text)
        if number == cond_line:
            start, end = _condition_columns(text, finding)
            prefix, size = _underline(text, start, end)
            label = "may raise on some ranks" if finding.guard_kind == "exception" else "rank-local condition"
            out.append(gutter + " " + prefix + paint("condition", "-" * size + " " + label))
        if number == exit_line:
            prefix, size = _underline(text, finding.guard.column, finding.guard.end_column if finding.guard.end_line == number else None)
            out.append(gutter + " " + prefix + paint("condition", "-" * size + " " + _EXIT_LABELS.get(finding.guard_kind, "")))
        if number == finding.line:
            end_col = finding.end_column if finding.end_line == finding.line else None
            prefix, size = _underline(text, finding.column, end_col)
            what = finding.collective or finding.code
            if finding.collective and finding.group:
                what = f"{finding.collective} over {finding.group}"
            out.append(gutter + " " + prefix + paint("caret", "^" * size + " " + what))
        previous = number
    out.append(gutter)
    return out


def _finding_block(finding: Finding, root: Optional[str], paint: Painter, show_source: bool,
                   sources: Optional[dict] = None) -> list[str]:
    where = paint("path", f"{display_path(finding.path, root)}:{finding.line}:{finding.column}:")
    code_style = "warning" if finding.code == "CSL002" else "code"
    block = [f"{where} {paint(code_style, finding.code)} {finding.message}"]
    if show_source:
        block.extend(_snippet(finding, paint, sources))
    indent = "   "
    if finding.chain:
        block.append(f"{indent}= why:")
        for index, link in enumerate(finding.chain, start=1):
            location = paint("dim", f"{display_path(link.path, root)}:{link.line}:")
            block.append(f"{indent}    {index}. {location} {link.note}")
    block.extend(_fix_lines(finding, indent))
    return block


def _fix_lines(finding: Finding, indent: str) -> list[str]:
    """What ``cslint fix`` can do: every strategy the rule offers, in the
    order ``fix`` tries them, or why it offers none."""
    if finding.fix is None:
        rule = get_rule(finding.code)
        if rule is None or finding.fix_facts is None:
            return []
        reason = rule.no_fix_reason(finding)
        return [f"{indent}= fix: none automatic: {reason}"] if reason else []
    lines = []
    for index, option in enumerate(finding.fix.options):
        label = "safe" if option.safe else "unsafe"
        reason = f": {option.reason}" if option.reason else ""
        lead = "= fix: `cslint fix` can apply" if index == 0 else "  else"
        lines.append(f"{indent}{lead} {option.strategy} ({label}){reason}")
    return lines


def _header(key: tuple, findings: list[Finding], root: Optional[str], paint: Painter) -> str:
    first = findings[0]
    if key[0] == "source":
        link = next(l for l in first.chain if l.kind == "source")
        label = f"`{first.source}`" if first.source else link.note
        location = f"{display_path(link.path, root)}:{link.line}"
    else:
        label = f"condition `{first.condition}`" if first.condition else "a rank-local condition"
        _, path, where, _ = key
        location = f"{display_path(path, root)}:{where}" if isinstance(where, int) else f"{display_path(path, root)} in {where}"
    return paint("header", f"root cause: {label} at {location} ({plural(len(findings), 'finding')})")


def render_text(
    result: CheckResult,
    *,
    root: Optional[str] = None,
    color: bool = False,
    show_source: bool = True,
    quiet: bool = False,
    sources: Optional[dict] = None,
) -> str:
    """Human-readable report; ends with the summary line (``quiet``: without
    it, and empty when there is nothing to report).  ``sources`` maps a
    finding's path to its text when that is not on disk (stdin)."""
    paint = Painter(color)
    findings = sorted(result.findings, key=Finding.sort_key)
    groups: dict[tuple, list[Finding]] = {}
    loose: list[Finding] = []
    for finding in findings:
        key = root_cause_key(finding)
        if key is None:
            loose.append(finding)
        else:
            groups.setdefault(key, []).append(finding)

    out: list[str] = []
    # Groups in the order of their first finding, so the report reads top-down.
    for key, members in groups.items():
        out.append(_header(key, members, root, paint))
        out.append("")
        for finding in members:
            out.extend(_finding_block(finding, root, paint, show_source, sources))
            out.append("")
    for finding in loose:
        out.extend(_finding_block(finding, root, paint, show_source, sources))
        out.append("")

    if quiet:
        return "\n".join(out[:-1]) + "\n" if out else ""
    out.append(paint("path", summary_line(result, len(groups))))
    return "\n".join(out) + "\n"
