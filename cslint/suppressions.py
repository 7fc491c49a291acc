"""`# cslint: ignore[CODE, ...]` suppression comments.

A comment on the line a finding points at (its ``line``) suppresses the
listed codes there; a bare ``# cslint: ignore`` suppresses every code.  Code
prefixes work as in ``select`` (``CSL1`` covers ``CSL101``..``CSL104``).
Suppressions that silence nothing are reported as CSL002
(:class:`~cslint.rules.csl002_unused_suppression.UnusedSuppression`), like
ruff's RUF100.
"""

from __future__ import annotations

import io
import re
import tokenize
from typing import Iterable, Optional

from .model import Finding
from .rules.csl002_unused_suppression import UnusedSuppression

_PATTERN = re.compile(r"#\s*cslint:\s*ignore(?:\[(?P<codes>[^\]]*)\])?", re.IGNORECASE)
MARKER = b"cslint:"

# line -> (codes or None for all, column of the comment)
Suppressions = dict[int, tuple[Optional[frozenset[str]], int]]


def find_suppressions(text: str) -> Suppressions:
    """Suppression comments of a module's source, by line.

    Uses the tokenizer so a ``# cslint: ignore`` inside a string is not a
    suppression; falls back to a line scan for text that does not tokenize.
    """
    found: Suppressions = {}
    if "cslint:" not in text:
        return found
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                _record(found, tok.string, tok.start[0], tok.start[1])
    except (tokenize.TokenError, IndentationError, SyntaxError):
        for number, line in enumerate(text.splitlines(), start=1):
            index = line.find("#")
            if index >= 0:
                _record(found, line[index:], number, index)
    return found


def _record(found: Suppressions, comment: str, line: int, column: int) -> None:
    match = _PATTERN.search(comment)
    if not match:
        return
    codes = match.group("codes")
    if codes is None:
        found[line] = (None, column)
    else:
        found[line] = (frozenset(c.strip().upper() for c in codes.split(",") if c.strip()), column)


def _covers(codes: Optional[frozenset[str]], code: str) -> bool:
    return codes is None or any(code.startswith(c) for c in codes)


def apply_suppressions(
    findings: Iterable[Finding], suppressions_by_path: dict[str, Suppressions]
) -> tuple[list[Finding], list[Finding]]:
    """Drop suppressed findings; return (kept, unused-suppression findings).

    A suppression counts as used when it silenced at least one finding on its
    line.  Each unused one becomes a CSL002 finding at the comment.
    """
    kept: list[Finding] = []
    used: set[tuple[str, int]] = set()
    for finding in findings:
        entry = suppressions_by_path.get(finding.path, {}).get(finding.line)
        if entry is not None and _covers(entry[0], finding.code):
            used.add((finding.path, finding.line))
            continue
        kept.append(finding)
    unused: list[Finding] = []
    for path, entries in suppressions_by_path.items():
        for line, (codes, column) in sorted(entries.items()):
            if (path, line) in used:
                continue
            unused.append(
                Finding(
                    code=UnusedSuppression.CODE,
                    path=path,
                    line=line,
                    column=column + 1,
                    end_line=line,
                    end_column=column + 1,
                    message=UnusedSuppression.message(codes),
                    collective="",
                    group="",
                )
            )
    return kept, unused
