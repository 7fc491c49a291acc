"""Discovery, reading, parsing and fact extraction (in worker processes),
and the wrapper names that drive the prefilter's later rounds
(:mod:`cslint.engine.prefilter` chooses the files).

Bad input never raises: a path that does not exist or cannot be walked is a
:class:`~cslint.model.FileError`; a file found but not analysable (syntax
error, newer syntax than this interpreter, non-UTF-8, NUL bytes, unreadable,
larger than ``max-file-size``) is reported as a CSL001 record.
"""

from __future__ import annotations

import errno
import os
import re
import signal
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Optional

from ..config import Settings
from ..model import FileError
from ..presets import Knowledge, load_presets
from ..engine.cache import store_pickle
from .facts import FileFacts, extract_file_facts

PARALLEL_THRESHOLD = 64  # fewer files than this are parsed in-process


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
    files: list = field(default_factory=list)
    errors: list = field(default_factory=list)


_EXCLUDE_RX: dict = {}


def _exclude_rx(patterns: tuple):
    """One compiled regex for a list of name patterns (fnmatch semantics)."""
    found = _EXCLUDE_RX.get(patterns)
    if found is None:
        import fnmatch

        found = re.compile("|".join(f"(?:{fnmatch.translate(os.path.normcase(p))})" for p in patterns)) \
            if patterns else None
        _EXCLUDE_RX[patterns] = found
    return found


def is_excluded(path: str, walk_root: str, settings: Settings, last_part_only: bool = False) -> bool:
    """ruff-like exclusion: patterns match path components *below* the
    directory being walked (so checking ``site-packages/torch`` explicitly
    works although ``site-packages`` is excluded by default) and whole paths
    relative to the project root.  ``last_part_only``: the walk already
    checked the directories above ``path``."""
    import fnmatch
    from pathlib import PurePath

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
    """Expand paths into Python files (with the settings of each)."""
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
        import stat as _stat

        if _stat.S_ISDIR(st.st_mode):
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
    :func:`~cslint.analysis.facts.module_name_for`), looking for each
    directory's ``__init__.py`` once."""

    def __init__(self):
        self._packages: dict = {}  # directory -> the package names it is (outermost first), () if none

    def _package(self, directory: str) -> tuple:
        found = self._packages.get(directory)
        if found is None:
            found = ()
            if os.path.isfile(os.path.join(directory, "__init__.py")):
                parent, name = os.path.split(directory)
                if name:
                    found = self._package(parent) + (name,)
            self._packages[directory] = found
        return found

    def __call__(self, path: str) -> str:
        directory, filename = os.path.split(os.path.abspath(path))
        stem = filename[:-3] if filename.endswith(".py") else filename
        parts = self._package(directory) + (() if stem == "__init__" else (stem,))
        return ".".join(parts) or stem


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


# -- parsing (possibly in worker processes) -------------------------------------

_KNOWLEDGE_CACHE: dict = {}


def _knowledge(names: tuple) -> Knowledge:
    known = _KNOWLEDGE_CACHE.get(names)
    if known is None:
        known = load_presets(list(names))
        _KNOWLEDGE_CACHE[names] = known
    return known


def remember_knowledge(names: tuple, knowledge: Knowledge) -> None:
    """Seed this process's preset cache (forked workers inherit it)."""
    _KNOWLEDGE_CACHE[names] = knowledge


def describe_syntax_error(exc: SyntaxError) -> str:
    message = f"syntax error: {exc.msg}"
    newer = f"{sys.version_info.major}.{sys.version_info.minor}"
    text = (exc.text or "").strip()
    if text.startswith(("type ", "def ", "class ")) and "[" in text.split("(")[0] or text.startswith("type "):
        message += f" (this may be syntax newer than the running Python {newer})"
    elif "invalid syntax" in exc.msg or "unexpected" in exc.msg:
        message += f" (if the file targets a newer Python than {newer}, run cslint with that Python)"
    return message


def parse_one(job: tuple) -> FileFacts:
    """Worker entry: (path, data, settings, preset names, module, deep names,
    positions already deep or None[, cache file]) -> facts.  With a cache
    file the worker stores the facts there itself: the parent would pickle
    them a second time, one file after another."""
    global _SINCE_COLLECT
    facts = _parse_one(job[:7])
    if len(job) > 7 and job[7]:
        store_pickle(job[7], facts)
    if _IN_WORKER:
        _SINCE_COLLECT += len(job[1])
        if _SINCE_COLLECT > COLLECT_EVERY_BYTES:
            import gc

            _SINCE_COLLECT = 0
            gc.collect()
    return facts


# A worker collects cycles after this much source: often enough to keep it
# small, rarely enough that the collector's walks stay a few per cent.
COLLECT_EVERY_BYTES = 8 << 20
_SINCE_COLLECT = 0


def _parse_one(job: tuple) -> FileFacts:
    path, data, settings, names, module, deep_names, already_deep = job
    import ast

    knowledge = _knowledge(names)
    try:
        tree = ast.parse(data, filename=path)
    except SyntaxError as exc:
        facts = FileFacts(path=path, module=module)
        facts.error = describe_syntax_error(exc)
        if "unicode" in (exc.msg or "").lower() or "utf-8" in (exc.msg or "").lower() or "decode" in (exc.msg or "").lower():
            facts.error = f"cannot decode source (not valid UTF-8 and no coding declaration): {exc.msg}"
        facts.error_line = exc.lineno or 1
        facts.error_column = exc.offset or 1
        return facts
    except (ValueError, UnicodeDecodeError) as exc:
        facts = FileFacts(path=path, module=module)
        facts.error = f"cannot decode source: {exc}"
        return facts
    except (RecursionError, MemoryError):
        facts = FileFacts(path=path, module=module)
        facts.error = "source too deeply nested or too large to parse"
        return facts
    try:
        return extract_file_facts(path, data, settings, knowledge, tree=tree, module=module,
                                  deep_names=deep_names, already_deep=already_deep)
    except RecursionError:
        facts = FileFacts(path=path, module=module)
        facts.error = "source too deeply nested to analyse"
        return facts


def _ready() -> bool:
    return True


_IN_WORKER = False


def _worker_start() -> None:
    """Worker processes run with the cyclic collector off, like the parent;
    what extraction leaves in cycles is collected every few megabytes of
    source instead (the inherited objects are frozen first, so a collection
    walks only the worker's own objects).  Without it a long-lived worker
    kept every file's garbage until the end of the run.

    Ctrl-C reaches every process of the terminal's group: the parent alone
    handles it (and stops the pool), so a worker ignores it instead of
    printing a traceback; SIGTERM ends a worker plainly, whatever handler
    the parent had when it forked."""
    global _IN_WORKER
    _IN_WORKER = True
    import gc

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if _CAN_BLOCK:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)  # blocked by the parent while it forked
    gc.freeze()


#: Held back while the workers start: a worker forked with the parent's
#: handlers would otherwise raise in the middle of its start-up.
_STOP_SIGNALS = frozenset((signal.SIGINT, signal.SIGTERM))
_CAN_BLOCK = hasattr(signal, "pthread_sigmask")


class Workers:
    """The worker processes of one run, started once, before the run reads
    any file: forked from a small parent, each worker holds only what it
    parses (a pool started per round was forked from a parent holding every
    file's bytes and facts, and paid the start-up each round)."""

    def __init__(self, jobs: int, files: int):
        self.jobs = jobs
        self.pool = None
        if jobs <= 1 or files < PARALLEL_THRESHOLD:
            return
        if _CAN_BLOCK:
            previous_mask = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
        try:
            try:
                import multiprocessing

                context = multiprocessing.get_context("fork") if sys.platform.startswith("linux") else None
                self.pool = ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_worker_start)
                # processes start on submission: start them all now, while small
                for future in [self.pool.submit(_ready) for _ in range(jobs)]:
                    future.result()
            finally:
                if _CAN_BLOCK:  # a signal that came meanwhile is delivered here, to the parent
                    signal.pthread_sigmask(signal.SIG_SETMASK, previous_mask)
        except (OSError, RuntimeError):  # no processes available: work here
            self.close()
        except BaseException:  # Ctrl-C while starting: no `with` block will stop the workers
            self.close()
            raise

    def map(self, jobs, bar=None) -> list:
        """Facts of every job, in order; ``bar`` (a ProgressBar) advances per
        file.  ``jobs`` may be a generator: jobs go to the workers in small
        batches as they come, so the workers parse while the caller is still
        choosing the files (the prefilter)."""
        if self.pool is None:
            return _parse_here(jobs, bar)
        jobs = iter(jobs)
        submitted, futures, batch = [], [], []
        batch_bytes = 0
        try:
            for job in jobs:
                submitted.append(job)
                batch.append(job)
                batch_bytes += len(job[1])
                if bar is not None:
                    bar.expect()
                if len(batch) == BATCH or batch_bytes >= BATCH_BYTES:
                    futures.append(self.pool.submit(_parse_batch, batch))
                    batch, batch_bytes = [], 0
            if batch:
                futures.append(self.pool.submit(_parse_batch, batch))
            out = []
            for future in futures:
                for facts in future.result():
                    out.append(facts)
                    if bar is not None:
                        bar.advance()
            return out
        except (OSError, RuntimeError):  # the pool broke (BrokenProcessPool): finish here
            self.close()
            if bar is not None:
                bar.start(bar.label, 0)
            return _parse_here(submitted, bar) + _parse_here(jobs, bar)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# A task is a few files: one file per task costs a round trip each, one
# large task at the end of a round keeps one worker busy while the others
# wait for the next round.
BATCH = 8  # files per task sent to a worker, at most
BATCH_BYTES = 48 << 10  # and at most about this much source


def _parse_batch(jobs: list) -> list:
    return [parse_one(job) for job in jobs]


def _parse_here(jobs, bar) -> list:
    out = []
    for job in jobs:
        if bar is not None:
            bar.expect()
        out.append(parse_one(job))
        if bar is not None:
            bar.advance()
    return out

