"""Checking one module read from stdin (``cslint check -``), as editors do.

The text is analysed as if it were the file named by ``--stdin-filename``:
that path chooses the configuration, decides per-file-ignores and
force-exclude, and is the path every finding and chain link shows.  The
analysis reads files, so the text is written to a private temporary
directory first, under the same package directories as the named file (its
module name, and so its relative imports, stay those of the real file).
With ``--context``, the project's files supply cross-file facts, except the
named file's copy on disk, which the text replaces.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import tempfile
from typing import Optional

from .config import Settings, load_settings
from .engine.discovery import DiscoveryOptions, GitIgnore, discover_files, excluded_by_settings, settings_resolver
from .model import CheckResult

#: What findings show as their path when stdin has no ``--stdin-filename`` (as ruff).
STDIN_PATH = "-"


def read_stdin() -> bytes:
    return sys.stdin.buffer.read()


def check_stdin(data: bytes, filename: Optional[str], *, settings: Optional[Settings] = None,
                select: Optional[list] = None, ignore: Optional[list] = None, jobs: Optional[int] = None,
                context: Optional[list] = None, discovery: DiscoveryOptions = DiscoveryOptions(),
                report: Optional[str] = None, min_confidence: Optional[str] = None) -> CheckResult:
    """Findings of the module ``data`` as if it were the file ``filename``."""
    from .api import check_paths

    shown = filename or STDIN_PATH
    if settings is None:
        settings = load_settings(os.path.dirname(os.path.abspath(filename)) if filename else os.getcwd())
    if filename and discovery.force_exclude_for(settings) and _excluded(filename, settings, discovery):
        return CheckResult(files=0)
    context_files = None
    if context:
        found = discover_files(context, settings_resolver(settings), discovery)
        own = os.path.realpath(filename) if filename else None
        context_files = [f.path for f in found.files if os.path.realpath(f.path) != own]
    with tempfile.TemporaryDirectory(prefix="cslint-stdin-") as scratch:
        copy = _stand_in(scratch, filename)
        with open(copy, "wb") as handle:
            handle.write(data)
        result = check_paths([copy], settings=settings, select=select, ignore=ignore, jobs=jobs, cache=False,
                             context=context_files, discovery=DiscoveryOptions(False, False), report=report,
                             min_confidence=min_confidence)
    result.files = 1
    result.findings = [_renamed(f, copy, shown) for f in result.findings]
    for error in result.errors:
        if error.path == copy:
            error.path = shown
    # per-file-ignores are patterns over the real path, which the copy does not have
    effective = settings
    if select is not None or ignore is not None:
        effective = dataclasses.replace(settings, select=list(select) if select is not None else settings.select,
                                        ignore=list(settings.ignore) + list(ignore or []))
    if filename:
        result.findings = [f for f in result.findings if effective.code_enabled(f.code, filename)]
    return result


def _excluded(filename: str, settings: Settings, discovery: DiscoveryOptions) -> bool:
    if excluded_by_settings(filename, settings):
        return True
    if discovery.gitignore_for(settings):
        gitignore = GitIgnore()
        gitignore.ask(filename)
        return os.path.abspath(filename) in gitignore.ignored()
    return False


def _stand_in(scratch: str, filename: Optional[str]) -> str:
    """The temporary file's path: ``filename``'s name under copies of the
    packages (directories with ``__init__.py``) that hold it."""
    if not filename:
        return os.path.join(scratch, "stdin.py")
    directory = os.path.dirname(os.path.abspath(filename))
    packages = []
    while os.path.isfile(os.path.join(directory, "__init__.py")):
        directory, package = os.path.split(directory)
        if not package:
            break
        packages.append(package)
    target = scratch
    for package in reversed(packages):
        target = os.path.join(target, package)
        os.mkdir(target)
        open(os.path.join(target, "__init__.py"), "wb").close()
    return os.path.join(target, os.path.basename(filename))


def _renamed(finding, copy: str, shown: str):
    chain = [dataclasses.replace(link, path=shown) if link.path == copy else link for link in finding.chain]
    return dataclasses.replace(finding, path=shown if finding.path == copy else finding.path, chain=chain)
