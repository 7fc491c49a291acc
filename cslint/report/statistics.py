"""`--statistics`: how many findings each code has, most frequent first (as ruff).

Text::

    3\tCSL102\tdivergent-early-exit
    1\tCSL101\tdivergent-branch

JSON: ``[{"code": "CSL102", "name": "divergent-early-exit", "count": 3}, ...]``.
"""

from __future__ import annotations

import json
from collections import Counter

from ..model import CheckResult
from .common import rule_catalog


def statistics(result: CheckResult) -> list[dict]:
    """One row per code: most findings first, then by code."""
    counts = Counter(f.code for f in result.findings)
    catalog = rule_catalog()
    return [{"code": code, "name": getattr(catalog.get(code), "NAME", ""), "count": count}
            for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]


def render_statistics(result: CheckResult, fmt: str = "text") -> str:
    rows = statistics(result)
    if fmt == "json":
        return json.dumps(rows, indent=2) + "\n"
    if not rows:
        return ""
    width = max(len(str(row["count"])) for row in rows)
    return "".join(f"{row['count']:>{width}}\t{row['code']}\t{row['name']}\n" for row in rows)
