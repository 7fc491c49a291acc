"""`--output-format concise`: one line per finding, as ruff's concise format.

    executor.py:42:17: CSL102 `tp_allgather` is skipped on ranks that return early ...
    Found 1 finding in 1 file.

Editors and ``grep`` read it: ``path:line:column: CODE message``, with the
path relative to ``root`` and the message on the same line (newlines in a
message become spaces).  No chain, no source: ``--output-format text`` or
``cslint explain CODE`` give those.
"""

from __future__ import annotations

from typing import Optional

from ..model import CheckResult, Finding
from .common import Painter, display_path, summary_line


def finding_line(finding: Finding, root: Optional[str], paint: Optional[Painter] = None) -> str:
    """``path:line:column: CODE message`` for one finding."""
    paint = paint or Painter(False)
    where = paint("path", f"{display_path(finding.path, root)}:{finding.line}:{finding.column}:")
    code = paint("warning" if finding.code == "CSL002" else "code", finding.code)
    return f"{where} {code} {' '.join(finding.message.split())}"


def render_concise(result: CheckResult, *, root: Optional[str] = None, color: bool = False,
                   quiet: bool = False) -> str:
    paint = Painter(color)
    lines = [finding_line(f, root, paint) for f in sorted(result.findings, key=Finding.sort_key)]
    if not quiet:
        lines.append(paint("path", summary_line(result)))
    return "\n".join(lines) + "\n" if lines else ""
