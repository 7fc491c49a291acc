"""`--show-settings`: the settings a file is checked with, as ruff prints them.

    Resolved settings for: pkg/executor.py
    Settings path: pyproject.toml

    [tool.cslint]
    presets = ["torch_distributed", "mpi4py", "tensorrt_llm"]
    ...

The table is valid TOML: copied into a ``pyproject.toml`` it gives the same
settings.  Command-line ``--select``/``--ignore``, ``--force-exclude`` and
``--[no-]respect-gitignore``, ``--report`` and ``--min-confidence`` are
applied, and ``unhandled-exceptions`` left unset shows what the presets
choose, so it shows what the run would use.
"""

from __future__ import annotations

import json
import os
from typing import Optional

from ..config import Settings
from .common import display_path


def _toml(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        if not value:
            return "{}"
        return "{ " + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


def render_settings(path: str, settings: Settings, *, select: Optional[list] = None, ignore: Optional[list] = None,
                    discovery=None, report: Optional[str] = None, min_confidence: Optional[str] = None,
                    unhandled_exceptions: str = "crash") -> str:
    """``report``/``min_confidence``: the command line's choice, if any;
    ``unhandled_exceptions``: the presets' choice where the settings leave
    it unset (what the run resolves it to)."""
    config = display_path(settings.config_file, os.getcwd()) if settings.config_file else "none (defaults)"
    force_exclude = settings.force_exclude if discovery is None else discovery.force_exclude_for(settings)
    gitignore = settings.respect_gitignore if discovery is None else discovery.gitignore_for(settings)
    rows = [
        ("presets", settings.presets),
        ("collectives", settings.collectives),
        ("rank-local", settings.rank_local),
        ("uniform", settings.uniform),
        ("select", list(select) if select is not None else settings.select),
        ("ignore", list(settings.ignore) + list(ignore or [])),
        ("per-file-ignores", settings.per_file_ignores),
        ("exclude", settings.exclude),
        ("force-exclude", force_exclude),
        ("respect-gitignore", gitignore),
        ("max-file-size", settings.max_file_size),
        ("report", report or settings.report),
        ("min-confidence", min_confidence or settings.min_confidence),
        ("unhandled-exceptions", settings.unhandled_exceptions or unhandled_exceptions),
    ]
    lines = [f"Resolved settings for: {path}", f"Settings path: {config}", "", "[tool.cslint]"]
    lines += [f"{key} = {_toml(value)}" for key, value in rows]
    return "\n".join(lines) + "\n"
