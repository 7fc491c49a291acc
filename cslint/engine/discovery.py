"""Which files a run checks, and their bytes.

The walk (:func:`discover`) expands the paths of the command line into
Python files with the settings of each; ruff-like excludes match path
components below the directory walked and whole paths relative to the
project root.  Bad input never raises: a path that does not exist or cannot
be walked is a :class:`~cslint.model.FileError`; a file found but not
readable (unreadable, NUL bytes, larger than ``max-file-size``) gets a
``problem`` that the run reports as CSL001.  On top of the walk,
:func:`discover_files` applies the filters a user of ruff expects:

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

import errno
import fnmatch
import functools
import os
import re
import stat
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Callable, Iterable, Optional

from ..analysis.scope import import_root
from ..config import Settings, load_settings
from ..model import FileError

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
                   options: DiscoveryOptions = DiscoveryOptions()) -> "Discovery":
    """:func:`discover` with the filters above."""
    named = []
    for raw in paths:
        if os.path.lexists(raw):
            settings = settings_for(raw)
            if is_fix_temporary(raw) or (options.force_exclude_for(settings) and excluded_by_settings(raw, settings)):
                continue
        named.append(raw)  # a missing path stays: discovery reports it
    found = discover(named, settings_for)
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
        kept = _outermost_scopes(os.path.dirname(rel) for rel in relative.values())
        while True:
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
            if done.returncode == 0:
                break
            if _NOT_SUPERSET in done.stderr and kept != [""]:
                # git (2.39) fails where the scopes' common prefix lies inside an ignored directory: ask again one
                # level up, until the scope holds the ignored directory, which git then lists whole
                kept = _outermost_scopes(os.path.dirname(scope) for scope in kept)
                continue
            reason = done.stderr.decode("utf-8", "replace").strip().splitlines()
            self.warnings.append(f"{top}: git ls-files failed ({reason[0] if reason else done.returncode}); "
                                 f".gitignore not applied (--no-respect-gitignore silences this)")
            return set()
        entries = [name.decode("utf-8", "surrogateescape") for name in done.stdout.split(b"\0") if name]
        files = {e for e in entries if not e.endswith("/")}
        directories = tuple(e for e in entries if e.endswith("/"))
        return {path for path, rel in relative.items() if rel in files or rel.startswith(directories)}


#: what ``git ls-files`` says where a pathspec's prefix lies inside a directory it lists as ignored
_NOT_SUPERSET = b"directory entry not superset of prefix"


def _outermost_scopes(scopes) -> list:
    """The scopes (directories relative to the work tree, "" for its top) none of the others holds, sorted."""
    kept: list = []
    for scope in sorted(set(scopes)):
        if not kept or not (scope == kept[-1] or scope.startswith(kept[-1] + "/") or kept[-1] == ""):
            kept.append(scope)
    return kept


# -- the walk ----------------------------------------------------------------------

@dataclass
class SourceFile:
    """A discovered file.  ``path`` is spelled as the user named it (what the
    report shows); ``real`` (its resolved absolute path) is what the analysis
    and the cache know it by, so that neither depends on the spelling, the
    working directory or a symbolic link on the way."""

    path: str
    settings: Settings
    real: str = ""
    data: Optional[bytes] = None
    problem: Optional[str] = None  # why the file cannot be analysed (CSL001)
    problem_line: int = 1
    problem_column: int = 1
    report: bool = True  # False for context-only files
    explicit: bool = False  # named on the command line: always parsed (so CSL001 is never skipped)

    def __post_init__(self) -> None:
        if not self.real:
            self.real = os.path.realpath(self.path)


@dataclass
class Discovery:
    """What a walk found: ``SourceFile``s, and ``FileError``s for paths it could not walk."""

    files: list = field(default_factory=list)
    errors: list = field(default_factory=list)


@functools.lru_cache(maxsize=None)
def _exclude_rx(patterns: tuple):
    """One compiled regex for a list of name patterns (fnmatch semantics)."""
    if not patterns:
        return None
    return re.compile("|".join(f"(?:{fnmatch.translate(os.path.normcase(p))})" for p in patterns))


def is_excluded(path: str, walk_root: str, settings: Settings, last_part_only: bool = False) -> bool:
    """ruff-like exclusion: patterns match path components *below* the
    directory being walked (so checking ``site-packages/torch`` explicitly
    works although ``site-packages`` is excluded by default) and whole paths
    relative to the project root.  ``last_part_only``: the walk already
    checked the directories above ``path``."""
    rx = _exclude_rx(tuple(settings.exclude))
    if rx is not None:
        parts = (os.path.basename(path),) if last_part_only else PurePath(os.path.relpath(path, walk_root)).parts
        for part in parts:
            if rx.match(os.path.normcase(part)):
                return True
    if settings.root and any("/" in pattern for pattern in settings.exclude):
        absolute = os.path.abspath(path)
        if absolute.startswith(os.path.abspath(settings.root) + os.sep):
            rel_root = os.path.relpath(absolute, settings.root)
            if any(fnmatch.fnmatch(rel_root, pattern) for pattern in settings.exclude if "/" in pattern):
                return True
    return False


def _walk(root: str, settings: Settings, out: list, errors: list) -> int:
    """Python files under a directory; does not follow directory symlinks."""
    count = 0
    stack = [root]
    seen_dirs = set()
    while stack:
        directory = stack.pop()
        try:
            real = os.path.realpath(directory)
            if real in seen_dirs:
                continue
            seen_dirs.add(real)
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            errors.append(FileError(directory, f"cannot list directory: {exc.strerror or exc}"))
            continue
        subdirs = []
        for entry in entries:
            path = entry.path
            try:
                if entry.is_dir(follow_symlinks=False):
                    if not is_excluded(path, root, settings, last_part_only=True):
                        subdirs.append(path)
                elif entry.name.endswith((".py", ".pyi")) and not entry.name.endswith(".pyi"):
                    if is_excluded(path, root, settings, last_part_only=True):
                        continue
                    out.append(path)
                    count += 1
            except OSError as exc:
                errors.append(FileError(path, f"cannot inspect: {exc.strerror or exc}"))
        stack.extend(reversed(subdirs))
    return count


def _real_key(path: str, real_dirs: dict) -> str:
    """``os.path.realpath(path)``, resolving each directory once (the
    per-file call re-resolved every component of every path)."""
    if os.path.islink(path):
        return os.path.realpath(path)
    directory, name = os.path.split(path)
    real = real_dirs.get(directory)
    if real is None:
        real = real_dirs[directory] = os.path.realpath(directory)
    return os.path.join(real, name)


def discover(paths: list, settings_for: Callable[[str], Settings]) -> Discovery:
    """Expand paths into Python files (with the settings of each), before
    the filters of :func:`discover_files`."""
    found = Discovery()
    seen = set()
    real_dirs: dict = {}
    for raw in paths:
        path = os.path.normpath(raw)
        try:
            st = os.stat(path)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                found.errors.append(FileError(raw, "symbolic link loop"))
            elif exc.errno == errno.ENOENT:
                if os.path.islink(path):
                    found.errors.append(FileError(raw, "broken symbolic link"))
                else:
                    found.errors.append(FileError(raw, "no such file or directory"))
            else:
                found.errors.append(FileError(raw, f"cannot access: {exc.strerror or exc}"))
            continue
        settings = settings_for(path)
        if stat.S_ISDIR(st.st_mode):
            files: list = []
            count = _walk(path, settings, files, found.errors)
            if count == 0:
                found.errors.append(FileError(raw, "no Python files found in directory"))
            for f in files:
                key = _real_key(f, real_dirs)
                if key in seen:
                    continue
                seen.add(key)
                found.files.append(SourceFile(f, settings_for(f) if f != path else settings, real=key))
        else:
            key = os.path.realpath(path)
            if key in seen:
                continue
            seen.add(key)
            found.files.append(SourceFile(path, settings, real=key, explicit=True))
    return found


class ModuleNames:
    """Dotted module names from the package structure around files (as
    :func:`~cslint.analysis.modulenames.module_name_for`), looking for each
    directory's ``__init__.py`` once."""

    def __init__(self):
        self._packages: dict = {}  # directory -> the package names it is (outermost first), () if none
        self._settled: dict = {}  # path -> its name among the run's files, where the package name is shared
        self._named: dict = {}  # path as asked -> its name (asked several times per file; emptied when settled)

    def settle(self, paths) -> None:
        """Give files of the run that the package structure names alike
        (``a/worker.py`` and ``b/worker.py`` beside no ``__init__.py``: both
        ``worker``) names of their own.  The analysis keys functions by module
        name; without this, the second file's functions replace the first's
        and its findings are lost.

        A name is settled per *root directory* (the one a file's dotted name
        starts from: the directory Python puts on ``sys.path`` to import it
        under that name), not per file: each root directory holding a
        colliding file gets a prefix of as many of its trailing directory
        names as tell the roots apart (``a``, ``b``), and every file of the
        run under that root takes it (``a.worker``, ``a.main``).  So a
        sibling's absolute import (``import worker`` in ``a/main.py``) still
        names a module of the run: see
        :func:`cslint.analysis.scope.collect_imports`."""
        paths = sorted(set(os.path.abspath(p) for p in paths))
        by_name: dict = {}
        for path in paths:
            by_name.setdefault(self(path), []).append(path)
        colliding_roots = {
            import_root(path, name)
            for name, group in by_name.items() if len(group) > 1
            for path in group
        }
        if not colliding_roots:
            return
        prefix_of = _distinct_suffixes(sorted(colliding_roots))
        for path in paths:
            name = self(path)
            prefix = prefix_of.get(import_root(path, name))
            if prefix:
                # a directory name with ':' would break the module:qualname keys
                self._settled[path] = f"{prefix}.{name}".replace(":", "_")
        self._named.clear()

    def _package(self, directory: str) -> tuple:
        """A directory is a package when it holds ``__init__.py``, or when
        its parent is one (a namespace portion inside a regular package,
        which Python imports as ``parent.name``: wheels often ship
        subpackages without ``__init__.py``)."""
        found = self._packages.get(directory)
        if found is None:
            found = ()
            parent, name = os.path.split(directory)
            if name and name.isidentifier():
                if os.path.isfile(os.path.join(directory, "__init__.py")):
                    found = self._package(parent) + (name,)
                else:
                    outer = self._package(parent)
                    if outer:
                        found = outer + (name,)
            self._packages[directory] = found
        return found

    def __call__(self, path: str) -> str:
        found = self._named.get(path)
        if found is None:
            found = self._named[path] = self._name(path)
        return found

    def _name(self, path: str) -> str:
        settled = self._settled.get(os.path.abspath(path))
        if settled is not None:
            return settled
        directory, filename = os.path.split(os.path.abspath(path))
        stem = filename[:-3] if filename.endswith(".py") else filename
        parts = self._package(directory) + (() if stem == "__init__" else (stem,))
        return ".".join(parts) or stem


def _distinct_suffixes(directories: list) -> dict:
    """For each directory, the dotted run of its trailing names, as short as
    tells every directory of the list apart (``/x/a``, ``/x/b`` -> ``a``,
    ``b``; ``/x/a``, ``/y/a`` -> ``x.a``, ``y.a``)."""
    parts = {d: [part for part in d.split(os.sep) if part] for d in directories}
    longest = max(len(p) for p in parts.values())
    for extra in range(1, longest + 1):
        named = {d: ".".join(p[-extra:]) for d, p in parts.items()}
        if len(set(named.values())) == len(named):
            return named
    return {d: ".".join(p) for d, p in parts.items()}


def read_file(source: SourceFile) -> None:
    """Fill ``data`` or ``problem``."""
    path = source.path
    try:
        size = os.path.getsize(path)
        if size > source.settings.max_file_size:
            source.problem = (f"file is {size} bytes, larger than max-file-size "
                              f"({source.settings.max_file_size} bytes); not analysed")
            return
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            source.problem = "symbolic link loop"
        else:
            source.problem = f"cannot read file: {exc.strerror or exc}"
        return
    if b"\0" in data:
        source.problem = "file contains NUL bytes (binary data?); not analysed"
        return
    source.data = data
