"""Helpers shared by the reporters: display paths, source lines, root causes, rule docs."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path, PurePath
from typing import Optional

from ..model import CheckResult, Finding

# Codes that are not rank-divergence findings (no collective, no chain).
SEVERITY_WARNING_CODES = ("CSL002",)

_RESET = "\x1b[0m"
_STYLES = {
    "code": "\x1b[1;31m",
    "warning": "\x1b[1;33m",
    "path": "\x1b[1m",
    "gutter": "\x1b[34m",
    "caret": "\x1b[1;31m",
    "condition": "\x1b[1;33m",
    "header": "\x1b[1;35m",
    "dim": "\x1b[2m",
    "added": "\x1b[32m",
    "removed": "\x1b[31m",
    "hunk": "\x1b[36m",
}


class Painter:
    """Wraps text in an ANSI style when colour is on; the identity otherwise."""

    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, style: str, text: str) -> str:
        if not self.color or not text:
            return text
        return f"{_STYLES[style]}{text}{_RESET}"


def color_wanted(choice: str, stream, environ: Optional[dict] = None) -> bool:
    """Whether to colour what goes to ``stream``.

    ``--color always``/``never`` decide.  With ``auto`` (the default), a
    non-empty ``NO_COLOR`` turns colour off (https://no-color.org), else a
    non-empty ``FORCE_COLOR`` turns it on, else colour is on when the stream
    is a terminal.
    """
    if choice == "always":
        return True
    if choice == "never":
        return False
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    try:
        return bool(stream is not None and stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


def plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


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


def summary_line(result: CheckResult, root_causes: Optional[int] = None) -> str:
    """The closing line of the text and concise reports (the text report
    also says how many root causes its findings have)."""
    findings = result.findings
    if findings:
        files = len({os.path.abspath(f.path) for f in findings})
        causes = "" if root_causes is None else f" ({plural(root_causes, 'root cause')})"
        summary = f"Found {plural(len(findings), 'finding')} in {plural(files, 'file')}{causes}."
    else:
        summary = f"All checks passed ({plural(result.files, 'file')} checked)."
    if result.errors:
        summary += f" {plural(len(result.errors), 'file')} could not be read."
    if result.below_confidence:
        summary += (f" {plural(result.below_confidence, 'finding')} below the confidence asked for "
                    f"not shown (--min-confidence low shows them).")
    return summary
