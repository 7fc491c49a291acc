"""Helpers shared by the reporters: display paths, source lines, root causes, rule docs."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path, PurePath
from typing import Optional

from ..model import Finding

# Codes that are not rank-divergence findings (no collective, no chain).
SEVERITY_WARNING_CODES = ("CSL002",)


def display_path(path: str, root: Optional[str]) -> str:
    """`path` relative to `root` (posix separators) when it lies under it, else as given."""
    if not root:
        return PurePath(path).as_posix()
    absolute = os.path.abspath(path)
    try:
        rel = os.path.relpath(absolute, os.path.abspath(root))
    except ValueError:  # another drive on Windows
        return PurePath(path).as_posix()
    if rel == ".." or rel.startswith(".." + os.sep):
        return PurePath(absolute).as_posix()
    return PurePath(rel).as_posix()


def is_under(path: str, root: Optional[str]) -> bool:
    """Whether `path` lies inside `root`."""
    if not root:
        return not os.path.isabs(path)
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    return not (rel == ".." or rel.startswith(".." + os.sep))


@lru_cache(maxsize=256)
def _read_lines(absolute_path: str, mtime_ns: int) -> tuple[str, ...]:
    with open(absolute_path, "rb") as handle:
        data = handle.read()
    return tuple(data.decode("utf-8", errors="replace").splitlines())


def source_lines(path: str) -> Optional[tuple[str, ...]]:
    """The lines of a source file (cached per path and mtime), or None if unreadable."""
    absolute = os.path.abspath(path)
    try:
        mtime = os.stat(absolute).st_mtime_ns
        return _read_lines(absolute, mtime)
    except OSError:
        return None


def root_cause_key(finding: Finding) -> Optional[tuple]:
    """What a finding's divergence comes from: the rank-local source it shares with others.

    Findings whose rank-local source has the same text in the same file (one
    field such as ``self.active_requests`` read in several methods, or one
    ``dist.get_rank()`` idiom) share one root cause.  Without a source link
    the controlling condition (its line, else its text in the function)
    stands in.  Findings that are not about a collective (CSL001, CSL002) have
    no root cause.
    """
    if not finding.collective:
        return None
    for link in finding.chain:
        if link.kind == "source":
            return ("source", os.path.abspath(link.path), finding.source or link.note)
    for link in finding.chain:
        if link.kind == "condition":
            return ("condition", os.path.abspath(link.path), link.line, finding.condition)
    if finding.guard is not None:
        return ("condition", os.path.abspath(finding.path), finding.guard.line, finding.condition)
    return ("condition", os.path.abspath(finding.path), finding.function, finding.condition)


def level_of(code: str) -> str:
    """SARIF-style level: unused suppressions warn, everything else is an error."""
    return "warning" if code in SEVERITY_WARNING_CODES else "error"


def rule_catalog() -> dict[str, object]:
    """Rule classes by code, or an empty dict while the rules package is unavailable."""
    try:
        from ..rules import all_rules
    except ImportError:
        return {}
    return {rule.CODE: rule for rule in all_rules()}


def first_paragraph(markdown: str) -> str:
    """The first prose paragraph of a rule's markdown docs (headings skipped)."""
    paragraph: list[str] = []
    for line in markdown.strip().splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            if paragraph:
                break
            continue
        if not stripped:
            if paragraph:
                break
            continue
        paragraph.append(stripped)
    return " ".join(paragraph)


def relative_uri_path(path: str, root: Optional[str]) -> Optional[str]:
    """Posix path relative to `root` if the file lies under it, else None."""
    if root is None:
        root = os.getcwd()
    if not is_under(path, root):
        return None
    return Path(os.path.relpath(os.path.abspath(path), os.path.abspath(root))).as_posix()
