"""`--format github`: GitHub Actions workflow commands, one annotation per finding.

    ::error file=pkg/executor.py,line=42,col=17,endLine=42,endColumn=66,title=CSL102::message%0Awhy: ...

Escaping follows the workflow-command rules: in the message ``%``, CR and LF
are percent-encoded; in properties ``:`` and ``,`` are as well, since they
delimit the property list.  Paths are relative to ``root`` (the checkout,
``$GITHUB_WORKSPACE``, is the working directory in a workflow step).
"""

from __future__ import annotations

from typing import Optional

from ..model import CheckResult, Finding
from .common import display_path, level_of


def escape_data(text: str) -> str:
    """Escape a workflow command's message."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a workflow command property value."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(level: str, message: str, **properties: object) -> str:
    """One workflow command line, properties in the given order, ``None`` values left out."""
    props = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties.items() if value is not None)
    head = f"::{level} {props}" if props else f"::{level}"
    return f"{head}::{escape_data(message)}"


def _message(finding: Finding, root: Optional[str]) -> str:
    lines = [finding.message]
    if finding.chain:
        lines.append("why:")
        for index, link in enumerate(finding.chain, start=1):
            lines.append(f"  {index}. {display_path(link.path, root)}:{link.line}: {link.note}")
    if finding.fix is not None:
        label = "safe" if finding.fix.safe else "unsafe"
        lines.append(f"fix: `cslint fix` can apply {finding.fix.strategy} ({label})")
    return "\n".join(lines)


def render_github(result: CheckResult, root: Optional[str] = None) -> str:
    """Annotation lines for every finding and unreadable file."""
    out = []
    for finding in sorted(result.findings, key=Finding.sort_key):
        end_line = finding.end_line if finding.end_line >= finding.line else None
        out.append(
            command(
                level_of(finding.code),
                _message(finding, root),
                file=display_path(finding.path, root),
                line=finding.line,
                col=finding.column,
                endLine=end_line,
                endColumn=finding.end_column if end_line is not None else None,
                title=finding.code,
            )
        )
    for error in result.errors:
        out.append(command("error", error.message, file=display_path(error.path, root), title="cslint"))
    return "\n".join(out) + "\n" if out else ""
