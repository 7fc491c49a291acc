"""Which files a run checks: the walk of :func:`cslint.analysis.index.discover`
plus the filters a user of ruff expects.

* **Force-exclude.**  A path named on the command line is checked even when
  ``exclude`` matches it, unless ``--force-exclude`` (or ``force-exclude =
  true``) is on: pre-commit names every changed file, and those must obey the
  project's excludes too.  The same option applies ``.gitignore`` to named
  paths.
* **.gitignore.**  Inside a git work tree, files git ignores are skipped
  (``--no-respect-gitignore`` or ``respect-gitignore = false`` turns this
  off).  Git is asked itself, once per repository and run, so its own
  rules apply: nested ``.gitignore`` files,
  ``.git/info/exclude``, the global excludes file, negation, directory
  patterns, and tracked files never counting as ignored.
* **Interrupted fixes.**  ``cslint fix --write`` stages each file in a
  ``.cslint-fix-*`` temporary beside it; a process killed before it renamed
  the temporary can leave one behind, and it is never linted.

The settings of each path come from :func:`settings_resolver` (the nearest
``[tool.cslint]``, one load per directory), shared by the analysis and by
``--show-files``/``--show-settings``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import PurePath
from typing import Callable, Iterable, Optional

from .config import Settings, load_settings

#: The prefix of ``cslint fix --write``'s temporary files (see :func:`is_fix_temporary`).
FIX_TEMP_PREFIX = ".cslint-fix-"


@dataclass(frozen=True)
class DiscoveryOptions:
    """Command-line overrides; None leaves each path's configured value."""

    force_exclude: Optional[bool] = None
    respect_gitignore: Optional[bool] = None

    def force_exclude_for(self, settings: Settings) -> bool:
        return settings.force_exclude if self.force_exclude is None else self.force_exclude

    def gitignore_for(self, settings: Settings) -> bool:
        return settings.respect_gitignore if self.respect_gitignore is None else self.respect_gitignore


def settings_resolver(settings: Optional[Settings] = None) -> Callable[[str], Settings]:
    """``path -> Settings``: ``settings`` for every path when given, else the
    nearest ``[tool.cslint]`` of the path's directory (loaded once per directory)."""
    by_directory: dict = {}
    config_memo: dict = {}

    def settings_for(path: str) -> Settings:
        if settings is not None:
            return settings
        directory = os.path.abspath(path) if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
        found = by_directory.get(directory)
        if found is None:
            found = by_directory[directory] = load_settings(directory, memo=config_memo)
        return found

    return settings_for


def is_fix_temporary(path: str) -> bool:
    """Whether ``path`` is a temporary file of ``cslint fix --write``."""
    return os.path.basename(path).startswith(FIX_TEMP_PREFIX)


def excluded_by_settings(path: str, settings: Settings) -> bool:
    """Whether an ``exclude`` pattern of ``settings`` matches ``path`` or one
    of its directories, relative to the project root (the working directory
    when there is no configuration file).  A path outside that directory is
    matched by its own name only, so the directories above a project never
    exclude it."""
    base = settings.root or os.getcwd()
    absolute = os.path.abspath(path)
    rel = os.path.relpath(absolute, base)
    if rel == os.curdir:
        return False
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        rel = os.path.basename(absolute)
    return Settings(root=None, exclude=list(settings.exclude)).is_excluded(PurePath(rel).as_posix())


def discover_files(paths: Iterable[str], settings_for: Callable[[str], Settings],
                   options: DiscoveryOptions = DiscoveryOptions()):
    """:func:`cslint.analysis.index.discover` with the filters above."""
    from .analysis import index as indexmod

    named = []
    for raw in paths:
        if os.path.lexists(raw):
            settings = settings_for(raw)
            if is_fix_temporary(raw) or (options.force_exclude_for(settings) and excluded_by_settings(raw, settings)):
                continue
        named.append(raw)  # a missing path stays: discovery reports it
    found = indexmod.discover(named, settings_for)
    gitignore = GitIgnore()
    kept = []
    for source in found.files:
        if is_fix_temporary(source.path):
            continue
        if options.gitignore_for(source.settings) and (not source.explicit or options.force_exclude_for(source.settings)):
            gitignore.ask(source.path)
        kept.append(source)
    ignored = gitignore.ignored()
    found.files = [source for source in kept if os.path.abspath(source.path) not in ignored]
    for warning in gitignore.warnings:
        print(f"cslint: warning: {warning}", file=sys.stderr)
    return found


class GitIgnore:
    """Which of a set of files git ignores, asked once per repository.

    ``git ls-files --others --ignored --exclude-standard --directory`` lists
    the ignored files and directories under the paths asked about (a whole
    ignored directory as one ``dir/`` entry, without walking it): a few
    hundredths of a second on vLLM's tree, where ``git check-ignore`` on
    every file took a quarter of a second.  Tracked files are never listed,
    as git never treats them as ignored.
    """

    def __init__(self) -> None:
        self._top_of_directory: dict = {}
        self._questions: dict = {}  # work tree -> absolute paths
        self.warnings: list = []

    def ask(self, path: str) -> None:
        absolute = os.path.abspath(path)
        top = self._work_tree(os.path.dirname(absolute))
        if top is not None:
            self._questions.setdefault(top, []).append(absolute)

    def ignored(self) -> set:
        """The absolute paths asked about that git ignores."""
        out: set = set()
        for top, paths in self._questions.items():
            out |= self._ignored_in(top, paths)
        return out

    def _work_tree(self, directory: str) -> Optional[str]:
        """The top of the git work tree holding ``directory`` (a ``.git``
        directory or file above it), or None."""
        visited = []
        top = None
        current = directory
        while True:
            if current in self._top_of_directory:
                top = self._top_of_directory[current]
                break
            visited.append(current)
            if os.path.exists(os.path.join(current, ".git")):
                top = current
                break
            parent = os.path.dirname(current)
            if parent == current:
                break
            current = parent
        for directory_seen in visited:
            self._top_of_directory[directory_seen] = top
        return top

    def _ignored_in(self, top: str, paths: list) -> set:
        prefix = top.rstrip(os.sep) + os.sep
        relative = {p: p[len(prefix):].replace(os.sep, "/") for p in paths}
        # the deepest directories holding every path asked about limit git's walk
        scopes = sorted({os.path.dirname(rel) for rel in relative.values()})
        kept: list = []
        for scope in scopes:
            if not kept or not (scope == kept[-1] or scope.startswith(kept[-1] + "/") or kept[-1] == ""):
                kept.append(scope)
        pathspecs = [f":(literal){scope}" if scope else "." for scope in kept]
        try:
            done = subprocess.run(
                ["git", "-C", top, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory",
                 "--", *pathspecs],
                capture_output=True, timeout=120, check=False,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            self.warnings.append(f"{top}: cannot ask git which files it ignores ({exc}); .gitignore not applied "
                                 f"(--no-respect-gitignore silences this)")
            return set()
        if done.returncode != 0:
            reason = done.stderr.decode("utf-8", "replace").strip().splitlines()
            self.warnings.append(f"{top}: git ls-files failed ({reason[0] if reason else done.returncode}); "
                                 f".gitignore not applied (--no-respect-gitignore silences this)")
            return set()
        entries = [name.decode("utf-8", "surrogateescape") for name in done.stdout.split(b"\0") if name]
        files = {e for e in entries if not e.endswith("/")}
        directories = tuple(e for e in entries if e.endswith("/"))
        return {path for path, rel in relative.items() if rel in files or rel.startswith(directories)}
