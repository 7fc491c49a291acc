"""Colour for unified diffs (``cslint fix --diff`` on a terminal), as git shows them."""

from __future__ import annotations

from .common import Painter


def paint_diff(diff: str, color: bool) -> str:
    """``diff`` with file headers bold, hunk headers cyan, removals red and
    additions green; unchanged when ``color`` is off."""
    if not color:
        return diff
    paint = Painter(True)
    out = []
    for line in diff.splitlines(keepends=True):
        body, end = (line[:-1], "\n") if line.endswith("\n") else (line, "")
        if body.startswith(("--- ", "+++ ")):
            style = "path"
        elif body.startswith("@@"):
            style = "hunk"
        elif body.startswith("-"):
            style = "removed"
        elif body.startswith("+"):
            style = "added"
        else:
            out.append(line)
            continue
        out.append(paint(style, body) + end)
    return "".join(out)
