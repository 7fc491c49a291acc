"""Discovery, the byte-level prefilter, parsing and fact extraction.

Only files whose bytes mention a collective (from the loaded presets and the
configuration) or the name of a function already known to reach one are
parsed.  Names of wrapper functions found in parsed files are added to the
needles and the remaining files scanned again, until nothing new turns up.

Bad input never raises: a path that does not exist or cannot be walked is a
:class:`~cslint.model.FileError`; a file found but not analysable (syntax
error, newer syntax than this interpreter, non-UTF-8, NUL bytes, unreadable,
larger than ``max-file-size``) is reported as a CSL001 record.
"""

from __future__ import annotations

import errno
import os
import re
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Optional

from ..config import Settings
from ..model import FileError
from ..presets import Knowledge, load_presets
from .facts import FileFacts, extract_file_facts, _GENERIC_METHODS
from .cache import store_pickle
from .prefilter import identifiers, import_text

PARALLEL_THRESHOLD = 64  # fewer files than this are parsed in-process


@dataclass
class SourceFile:
    path: str
    settings: Settings
    data: Optional[bytes] = None
    problem: Optional[str] = None  # why the file cannot be analysed (CSL001)
    problem_line: int = 1
    problem_column: int = 1
    report: bool = True  # False for context-only files
    explicit: bool = False  # named on the command line: always parsed (so CSL001 is never skipped)


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
                found.files.append(SourceFile(f, settings_for(f) if f != path else settings))
        else:
            key = os.path.realpath(path)
            if key in seen:
                continue
            seen.add(key)
            found.files.append(SourceFile(path, settings, explicit=True))
    return found


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


def compile_needles(needles: set):
    """A matcher for any of ``needles`` as a whole identifier (a wrapper named
    ``_stream`` must not select every file that mentions ``current_stream``),
    or None without needles.  The regex is a trie (``ab(?:c|d)`` rather than
    ``abc|abd``): ``re`` tries alternatives one by one at every position, so a
    flat alternation of a few hundred wrapper names scanned the tree several
    times slower."""
    words = sorted({n for n in needles if n})
    if not words:
        return None
    # The start of a word is checked after a match: a leading lookbehind
    # would cost the regex its first-byte scan and triple the time.
    return _WholeWords(re.compile(_trie_pattern(words) + rb"(?![A-Za-z0-9_])"))


_IDENTIFIER_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


class _WholeWords:
    """``search`` for a needle that is a whole identifier."""

    def __init__(self, regex):
        self.regex = regex

    def search(self, data: bytes):
        return next(self._matches(data), None)

    def names_in(self, data: bytes) -> set:
        """Every needle that occurs in ``data`` as a whole identifier."""
        return {found.group() for found in self._matches(data)}

    def _matches(self, data: bytes):
        for found in self.regex.finditer(data):
            if found.start() == 0 or data[found.start() - 1] not in _IDENTIFIER_BYTES:
                yield found


class WrapperPrefilter:
    """Selects the files that use a wrapper name (rounds 2 and later).

    A file can reach another module's function only through an attribute
    (``module.fn``, ``obj.method``) or a name it imports (``from m import
    fn``), or through a star import; a bare ``fn(...)`` anywhere else calls
    the file's own ``fn``.  So a name selects a file where it follows a
    ``.``, where an import statement names it, or anywhere in a file with a
    star import.  Scanning for ``.name`` is also an order of magnitude
    faster than scanning for the bare words: the regex engine jumps from dot
    to dot.  Each attribute use is then judged by its receiver:

    * a wrapper defined only as module-level functions is reached through an
      attribute only on its module (``loss._log_softmax``;
      ``aten._log_softmax`` is another function): the file must import the
      module or spell it before the dot;
    * a method reached through ``self``/``cls``/``super()`` belongs to the
      file's own class hierarchy, so the file must name a class that defines
      the wrapper (or a subclass of one): a mixin's ``_maybe_add_hidden_state``
      called by two dozen models is not the one override that gathers;
    * a method name that several classes define (``dispatch``,
      ``process_weights_after_loading``) cannot be resolved from the name
      alone on any receiver: it too needs the name of a defining class in
      the file;
    * any other receiver (``runner.sync_weights()``) selects.
    """

    def __init__(self, needles: set, definitions: "WrapperDefinitions"):
        self.definitions = definitions
        self.uses = _Uses(needles)
        self._owner_words: dict = {}
        self._module_words: dict = {}

    def search(self, data: bytes) -> bool:
        uses = self.uses
        if uses.empty:
            return False
        imports: Optional[bytes] = None
        judged: dict = {}  # (name, needs its own hierarchy) -> verdict, for this file
        for found in uses.attribute.finditer(data):
            if imports is None:
                imports = import_text(data)
            if self._attribute_selects(data, found.start(), found.group(1), imports, judged):
                return True
        if imports is None:
            imports = import_text(data)
        if not identifiers(imports).isdisjoint(uses.names):
            return True
        return b"import *" in data and uses.word.search(data) is not None

    def _attribute_selects(self, data: bytes, dot: int, name: bytes, imports: bytes, judged: dict) -> bool:
        receiver_start = dot
        while receiver_start and data[receiver_start - 1] in _IDENTIFIER_BYTES:
            receiver_start -= 1
        receiver = data[receiver_start:dot]
        definitions = self.definitions
        modules = definitions.function_modules.get(name)
        if modules is not None:
            if receiver in modules:
                return True
            key = (name, "module")
            if key not in judged:
                judged[key] = self._matcher(self._module_words, name, modules).search(imports) is not None
            return judged[key]
        owners = definitions.method_owners.get(name)
        if owners is None:
            return True
        own_hierarchy = receiver in (b"self", b"cls") or (receiver == b"" and data[max(0, dot - 7):dot] == b"super()")
        if own_hierarchy or name in definitions.shared_methods:
            key = (name, "owner")
            if key not in judged:
                judged[key] = self._matcher(self._owner_words, name, owners).search(data) is not None
            return judged[key]
        return True

    @staticmethod
    def _matcher(memo: dict, name: bytes, words: set):
        found = memo.get(name)
        if found is None:
            found = memo[name] = compile_needles(words)
        return found


class WrapperDefinitions:
    """Where the wrappers found so far are defined (see
    :class:`WrapperPrefilter`):

    * ``function_modules``: a name defined only as functions, never as a
      method -> the last components of the modules that define it;
    * ``method_owners``: a method name -> the names of the classes whose
      method of that name issues a collective, and of their subclasses
      among the analysed files;
    * ``shared_methods``: the method names that two or more classes define.
    """

    def __init__(self, facts_list, names: set):
        facts_list = list(facts_list)
        definers: dict = {}
        for facts in facts_list:
            for cls in facts.classes:
                for method in cls.methods:
                    if method in names:
                        definers.setdefault(method, set()).add(cls.key)
        self.shared_methods = {name.encode() for name, keys in definers.items() if len(keys) >= 2}
        owners: dict = {}
        functions: dict = {}
        methods: set = set(definers)
        for facts in facts_list:
            module_last = facts.module.rsplit(".", 1)[-1].encode()
            for fn in facts.functions:
                name = fn.qualname.rsplit(".", 1)[-1]
                if name not in names:
                    continue
                if fn.class_key:
                    methods.add(name)
                    if any(site.collective is not None for v in fn.variants.values() for site in v.sites):
                        owner = fn.class_key.rsplit(":", 1)[-1].rsplit(".", 1)[-1].encode()
                        owners.setdefault(name.encode(), set()).add(owner)
                else:
                    functions.setdefault(name.encode(), set()).add(module_last)
        self.function_modules = {name: modules for name, modules in functions.items()
                                 if name.decode() not in methods}
        subclasses = _subclasses_by_base_name(facts_list)
        self.method_owners = {name: _with_subclasses(found, subclasses) for name, found in owners.items()}


def _subclasses_by_base_name(facts_list) -> dict:
    """Class name -> names of the classes that list it as a base (bytes)."""
    out: dict = {}
    for facts in facts_list:
        for cls in facts.classes:
            for _kind, text in cls.bases:
                base = text.rsplit(":", 1)[-1].rsplit(".", 1)[-1].encode()
                out.setdefault(base, set()).add(cls.name.encode())
    return out


def _with_subclasses(names: set, subclasses: dict) -> set:
    found = set(names)
    frontier = list(names)
    while frontier:
        for child in subclasses.get(frontier.pop(), ()):
            if child not in found:
                found.add(child)
                frontier.append(child)
    return found


class _Uses:
    """The attribute uses (``.name``) and whole-word uses of a set of names."""

    def __init__(self, names: set):
        words = sorted({n for n in names if n})
        self.empty = not words
        if words:
            self.attribute = re.compile(rb"\.[ \t]*(" + _trie_pattern(words) + rb")(?![A-Za-z0-9_])")
            self.word = compile_needles(set(words))
        self.names = frozenset(words)


def _trie_pattern(words: list) -> bytes:
    trie: dict = {}
    for word in words:
        node = trie
        for byte in word:
            node = node.setdefault(byte, {})
        node[None] = True  # a needle ends here

    def pattern(node: dict) -> bytes:
        branches = [re.escape(bytes([byte])) + pattern(child)
                    for byte, child in sorted((k, v) for k, v in node.items() if k is not None)]
        if None in node:
            # a needle ends here; longer ones are tried first so that whole
            # words can still match, then the empty alternative
            branches.append(b"")
        if len(branches) == 1:
            return branches[0]
        return b"(?:" + b"|".join(branches) + b")"

    return pattern(trie)


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
    kept every file's garbage until the end of the run."""
    global _IN_WORKER
    _IN_WORKER = True
    import gc

    gc.freeze()


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
        try:
            import multiprocessing

            context = multiprocessing.get_context("fork") if sys.platform.startswith("linux") else None
            self.pool = ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_worker_start)
            # processes start on submission: start them all now, while small
            for future in [self.pool.submit(_ready) for _ in range(jobs)]:
                future.result()
        except (OSError, RuntimeError):  # no processes available: work here
            self.close()

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


def wrapper_names(facts: FileFacts, ambiguous: frozenset = frozenset()) -> set:
    """Names of the functions of a file that issue a collective directly:
    their callers elsewhere must be analysed in depth too.  Only direct
    wrappers spread across files (deeper chains are followed within a file):
    following every transitive caller by name would pull in most of a large
    tree through names such as ``state_dict``.  ``ambiguous`` names (the
    collective names that are also ordinary methods: ``gather``, ``reduce``)
    do not spread either: a ``def reduce`` somewhere would otherwise deepen
    every caller of ``functools.reduce`` and ``Tensor.gather``; calls through
    a communicator are still recognised as collectives directly."""
    out = set()
    for fn in facts.functions:
        if not fn.deep:
            continue
        name = fn.qualname.rsplit(".", 1)[-1]
        if name == "__init__" and fn.class_key and "." in fn.qualname:
            # a constructor that issues a collective: ``Mailbox(group)`` is
            # the call other files make
            name = fn.qualname.rsplit(".", 2)[-2]
        if name.startswith("<") or name.startswith("__") or name in _GENERIC_METHODS or len(name) < 6 \
                or name in ambiguous:
            continue
        if any(site.collective is not None for v in fn.variants.values() for site in v.sites):
            out.add(name)
    return out


def needs_deeper_look(facts: FileFacts, names: set) -> bool:
    """Whether a file summarised some function that calls one of ``names``."""
    if facts.skipped:
        return bool(facts.called_names & names)
    return any(not fn.deep and fn.called_names & names for fn in facts.functions)
