"""Paths as cslint shows and records them: relative to a root, with '/' separators.

One helper for every consumer that writes a path others read back: the
reporters, the baseline, the codemods' diffs and the TensorRT-LLM patcher's
report, patch and record.
"""

from __future__ import annotations

import os
from pathlib import PurePath
from typing import Optional


def relative_posix(path: str, root: Optional[str] = None, *, resolve: bool = False) -> str:
    """``path`` relative to ``root`` (default: the working directory), with
    '/' separators; it starts with ``../`` when the path lies outside.
    ``resolve`` follows symbolic links on both sides first."""
    absolute = os.path.realpath(path) if resolve else os.path.abspath(path)
    base = root if root is not None else os.getcwd()
    base = os.path.realpath(base) if resolve else os.path.abspath(base)
    try:
        relative = os.path.relpath(absolute, base)
    except ValueError:  # another drive on Windows
        return PurePath(absolute).as_posix()
    return PurePath(relative).as_posix()


def is_inside(relative: str) -> bool:
    """Whether a path :func:`relative_posix` returned lies under its root."""
    return relative != ".." and not relative.startswith("../") and not PurePath(relative).is_absolute()


def under_root(path: str, root: Optional[str] = None, *, resolve: bool = False) -> Optional[str]:
    """``path`` relative to ``root`` when it lies under it, else None."""
    relative = relative_posix(path, root, resolve=resolve)
    return relative if is_inside(relative) else None
