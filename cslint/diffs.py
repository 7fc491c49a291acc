"""Unified diffs that ``patch -p1`` and ``git apply`` accept (the codemods' and the patcher's)."""

from __future__ import annotations

import difflib


def unified_diff(original: str, fixed: str, relpath: str, *, git_header: bool = False) -> str:
    """The diff of one file, ``a/``/``b/`` paths from ``relpath``; "" when nothing changed.

    Files without a final newline get the ``\\ No newline at end of file``
    marker; ``git_header`` adds the ``diff --git`` line.
    """
    a = original.splitlines(keepends=True)
    b = fixed.splitlines(keepends=True)
    out = []
    for line in difflib.unified_diff(a, b, f"a/{relpath}", f"b/{relpath}"):
        if line.startswith(("---", "+++")):
            out.append(line.rstrip("\n") + "\n")
        elif line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n\\ No newline at end of file\n")
    if not out:
        return ""
    header = [f"diff --git a/{relpath} b/{relpath}\n"] if git_header else []
    return "".join(header + out)
