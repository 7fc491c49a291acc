"""Write a small project of our own to disk and lint it whole, as the
cross-file tests do.

``write_files`` writes ``{relative path: source}`` under a root (folders made
as needed, sources dedented); ``write_package`` makes one package folder with
an ``__init__.py`` and those files in it; ``package_findings`` lints a path
the way the value-model tests compare findings: no cache, one job, one
finding per collective site.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from cslint.api import check_paths


def write_files(root: Path, files: dict) -> Path:
    for relative, text in files.items():
        path = Path(root) / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return Path(root)


def write_package(root: Path, name: str, files: dict, init: str = "") -> Path:
    """``root/name/`` holding ``__init__.py`` (``init``) and ``files``."""
    package = Path(root) / name
    return write_files(package, {"__init__.py": init, **files})


def package_findings(path: Path, **options) -> list:
    settings = {"cache": False, "jobs": 1, "report": "per-site", **options}
    return check_paths([str(path)], **settings).findings
