"""The findings of a source text, as the value-model tests compare them.

``codes`` gives ``(code, line)`` per finding of ``check_source``;
``barrier_finding`` the one finding such a test expects: CSL101 at the last
line that calls ``dist.barrier()``.
"""

from __future__ import annotations

import textwrap

from cslint.api import check_source


def codes(source: str) -> list:
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source)).findings]


def barrier_finding(source: str) -> list:
    lines = textwrap.dedent(source).splitlines()
    return [("CSL101", max(i for i, line in enumerate(lines, 1) if "dist.barrier()" in line))]
