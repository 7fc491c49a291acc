"""Reporters: turn a :class:`~cslint.model.CheckResult` into text for people and tools.

    render(result, "text" | "concise" | "json" | "sarif" | "github", root=..., color=...)
    render_statistics(result, "text" | "json")

``root`` is the directory paths are shown relative to (the CLI passes the
working directory); reporters never change the findings themselves.
"""

from __future__ import annotations

from typing import Optional

from ..model import CheckResult

FORMATS = ("text", "concise", "json", "sarif", "github")


class UnknownFormatError(ValueError):
    """An output format name that no reporter handles."""


def render(
    result: CheckResult,
    fmt: str,
    *,
    root: Optional[str] = None,
    color: bool = False,
    show_source: bool = True,
    quiet: bool = False,
    sources: Optional[dict] = None,
) -> str:
    """The report of `result` in format `fmt`, as one string ending in a newline
    (or empty: a quiet report without findings).

    ``color``, ``show_source``, ``quiet`` (no summary line) and ``sources``
    (path -> text of modules that are not on disk, such as stdin) affect
    the text and concise formats only.
    """
    if fmt == "text":
        from .text import render_text

        return render_text(result, root=root, color=color, show_source=show_source, quiet=quiet, sources=sources)
    if fmt == "concise":
        from .concise import render_concise

        return render_concise(result, root=root, color=color, quiet=quiet)
    if fmt == "json":
        from .json_report import render_json

        return render_json(result)
    if fmt == "sarif":
        from .sarif import render_sarif

        return render_sarif(result, root=root)
    if fmt == "github":
        from .github import render_github

        return render_github(result, root=root)
    raise UnknownFormatError(f"unknown output format {fmt!r}; choose one of: {', '.join(FORMATS)}")


def render_statistics(result: CheckResult, fmt: str = "text") -> str:
    """The number of findings per code (``--statistics``), as text or JSON."""
    from .statistics import render_statistics as render

    return render(result, fmt)


__all__ = ["FORMATS", "UnknownFormatError", "render", "render_statistics"]
