"""The dotted name a file has from the packages around it: what the analysis
keys a module's functions by, and what names a file the same wherever its
tree lives (a digest that must not change when a tree moves reads it)."""

from __future__ import annotations

import os


def module_name_for(path: str) -> str:
    """Dotted module name from the package structure around ``path``: the
    directories up to the outermost one holding ``__init__.py``, directories
    without one in between included (namespace portions inside a regular
    package, see :class:`cslint.analysis.index.ModuleNames`)."""
    path = os.path.abspath(path)
    directory, filename = os.path.split(path)
    stem = filename[:-3] if filename.endswith(".py") else filename
    parts = [] if stem == "__init__" else [stem]
    between: list = []  # directories without __init__.py above the last package
    while True:
        directory, package = os.path.split(directory)
        if not package or not package.isidentifier():
            break
        if os.path.isfile(os.path.join(directory, package, "__init__.py")):
            parts.extend(between)
            parts.append(package)
            between = []
        else:
            between.append(package)
        if directory == os.path.dirname(directory):
            break
    parts.reverse()
    return ".".join(parts) or stem
