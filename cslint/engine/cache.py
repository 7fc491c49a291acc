"""On-disk cache in ``.cslint_cache/``.

One rule decides what may be reused: a key is a digest of everything the
stored value is computed from, and nothing stored depends on how a run names
its files.  So a result never depends on earlier runs, on the working
directory or on how a path was spelled (``.``, ``./x.py``, an absolute path,
a symbolic link).

* **Facts of one file** (``xx/<key>.pickle``): the key is the worker's whole
  input -- the file's resolved path (the facts cite it), its module name
  (from the ``__init__.py`` files around it), its bytes, its settings'
  fingerprint, the presets, the wrapper names that make its functions deep
  and, for a re-analysis patch, the functions already analysed in depth.
  Equal key, equal input, equal facts.
* **The analysis of a run** (``runs/<key>.pickle``, the newest 16 kept): the
  key covers the same per-file parts for every file of the run (content by
  digest), each file's role (reported or context only, named on the command
  line or found in a directory) and the presets.  What is stored are the
  findings before suppressions and selection, with resolved paths; each run
  maps them to the spelling it was given and applies suppressions and
  ``--select``/``--ignore`` itself.

Every key also covers the cache format, the cslint version and a digest of
the analyser's own modules.  A cache that cannot be read or written is
ignored silently: it only saves time.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from typing import Optional

from .. import __version__
from .reducers import DISPATCH_TABLE

CACHE_DIR = ".cslint_cache"
_FORMAT = "13"  # 13: FileFacts.self_value_reads; 12: FileFacts.value_names; 11: FuncFacts.derived_stores; 10: Cond.names_only, FuncFacts.first_call holds the reference alone; 9: Cond.arm_lines; 8: a call passes a display's elements by position (positions.py); 7: Cond.unhandled (6: no Site.canonical / ...)
MAX_RUNS = 16  # whole-run results kept (the newest)


_ANALYSER: Optional[str] = None


def analyser_digest() -> str:
    """Names, sizes and mtimes of cslint's own modules: a changed analyser
    (a development checkout between releases) never reuses stale facts."""
    global _ANALYSER
    if _ANALYSER is None:
        digest = hashlib.sha1()
        package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        for directory, dirs, files in os.walk(package):
            dirs.sort()
            for name in sorted(files):
                if name.endswith(".py"):
                    path = os.path.join(directory, name)
                    try:
                        st = os.stat(path)
                    except OSError:
                        continue
                    digest.update(f"{os.path.relpath(path, package)}:{st.st_size}:{st.st_mtime_ns};".encode())
        _ANALYSER = digest.hexdigest()
    return _ANALYSER


class FactCache:
    def __init__(self, root: Optional[str]):
        self.directory = os.path.join(root or os.getcwd(), CACHE_DIR)
        self._ready = False

    def key(self, *parts) -> str:
        """The digest of ``parts`` (``str`` or ``bytes``, each length-prefixed
        so that no two different part lists share a digest) together with
        the cache format, cslint's version and the analyser's digest."""
        digest = hashlib.sha256()
        for part in (_FORMAT, __version__, analyser_digest(), *parts):
            if isinstance(part, str):
                part = part.encode("utf-8", "surrogateescape")
            digest.update(len(part).to_bytes(8, "little"))
            digest.update(part)
        return digest.hexdigest()

    def run_key(self, parts) -> str:
        """:meth:`key` of an iterable of parts."""
        return self.key("run", *parts)

    def _run_file(self, key: str) -> str:
        return os.path.join(self.directory, "runs", key + ".pickle")

    def get_run(self, key: str):
        """The findings stored under ``key`` by an earlier run, or None."""
        found = self.get_path(self._run_file(key))
        return found if isinstance(found, list) else None

    def put_run(self, key: str, findings: list) -> None:
        target = self._run_file(key)
        self._store(target, findings)
        try:  # keep the newest few
            runs = os.path.dirname(target)
            entries = sorted((os.path.getmtime(os.path.join(runs, n)), n) for n in os.listdir(runs))
            for _mtime, name in entries[:-MAX_RUNS]:
                os.unlink(os.path.join(runs, name))
        except OSError:
            pass

    def _file(self, key: str) -> str:
        return os.path.join(self.directory, key[:2], key + ".pickle")

    def get(self, key: str):
        return self.get_path(self._file(key))

    @staticmethod
    def get_path(path: str):
        try:
            with open(path, "rb") as handle:
                return pickle.load(handle)
        except Exception:
            return None

    def put(self, key: str, value) -> None:
        self._store(self._file(key), value)

    def file_for(self, key: str) -> str:
        """Where ``put(key, ...)`` stores; for writers in other processes
        (:func:`store_pickle`), after :meth:`prepare`."""
        return self._file(key)

    def _store(self, target: str, value) -> None:
        self.prepare()
        store_pickle(target, value)

    def prepare(self) -> None:
        """Create the cache directory and its CACHEDIR.TAG (once)."""
        if self._ready:
            return
        try:
            os.makedirs(self.directory, exist_ok=True)
            tag = os.path.join(self.directory, "CACHEDIR.TAG")
            if not os.path.exists(tag):
                with open(tag, "w") as handle:
                    handle.write("Signature: 8a477f597d28d172789f06886806bc55\n# cslint fact cache\n")
        except OSError:
            pass
        self._ready = True


def store_pickle(target: str, value) -> None:
    """Write ``value`` to ``target`` atomically (a temporary file in the same
    directory, then a rename); any failure is ignored: the cache only saves
    time."""
    try:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target))
        try:
            with os.fdopen(fd, "wb") as handle:
                pickler = pickle.Pickler(handle, protocol=pickle.HIGHEST_PROTOCOL)
                pickler.dispatch_table = DISPATCH_TABLE  # the facts' reducers (reducers.py)
                pickler.dump(value)
            os.replace(tmp, target)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except Exception:
        pass
