"""Reporters: turn a :class:`~cslint.model.CheckResult` into text for people and tools.

    render(result, "text" | "json" | "sarif" | "github", root=..., color=...)

``root`` is the directory paths are shown relative to (the CLI passes the
working directory); reporters never change the findings themselves.
"""

from __future__ import annotations

from typing import Optional

from ..model import CheckResult

FORMATS = ("text", "json", "sarif", "github")


class UnknownFormatError(ValueError):
    """An output format name that no reporter handles."""


def render(
    result: CheckResult,
    fmt: str,
    *,
    root: Optional[str] = None,
    color: bool = False,
    show_source: bool = True,
) -> str:
    """The report of `result` in format `fmt`, as one string ending in a newline.

    ``color`` and ``show_source`` only affect the text format.
    """
    if fmt == "text":
        from .text import render_text

        return render_text(result, root=root, color=color, show_source=show_source)
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


__all__ = ["FORMATS", "UnknownFormatError", "render"]
