"""`--output-format json`: exactly the object of the JSON contract in ``docs/design.md`` (``CheckResult.to_json``)."""

from __future__ import annotations

import json

from ..model import CheckResult


def render_json(result: CheckResult) -> str:
    """The JSON contract, indented, with a trailing newline."""
    return json.dumps(result.to_json(), indent=2, ensure_ascii=False) + "\n"
