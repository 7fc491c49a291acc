"""Call paths of collective calls: op, group, call site and its callers.

The call site is the first frame outside ``cslint.runtime`` (and outside any
extra modules the caller names as wrappers), followed by its callers up to
``depth`` frames: the *call path*.  Two ranks calling the same collective from
different call paths are out of step even when op and group agree (e.g. one
rank in `_sync_gen_only_benchmark_has_insufficient_kv`, another in
`_is_benchmark_disagg_fill_complete`, both through
`_allgather_model_parallel_status`).

A call path carries a stable hash (crc32 of ``op|group`` and
``basename:line:qualname`` items), the same on every rank for the same
source; the ledger (`cslint.runtime.ledger`) folds it into the digests the
ranks compare, and caches paths per (code object, instruction) chain, so a
path is built once per call site.
"""

from __future__ import annotations

import os
import sys
import zlib
from dataclasses import dataclass
from typing import Any

_RUNTIME_DIR = os.path.dirname(os.path.abspath(__file__))
_PACKAGE_DIR = os.path.dirname(_RUNTIME_DIR) + os.sep


def is_internal_path(path: str) -> bool:
    """Frames that say nothing about the program: cslint's own (wrappers, the launcher) and runpy's."""
    return (path.startswith("<frozen ") or os.path.basename(path) == "runpy.py"
            or os.path.abspath(path).startswith(_PACKAGE_DIR))


def user_frames(frames: list[dict]) -> list[dict]:
    """JSON frames (``path``, ``line``, ``function``) without cslint's own and runpy's."""
    return [f for f in frames if not is_internal_path(f.get("path", ""))]


@dataclass(frozen=True)
class Frame:
    """One frame of a call path."""

    path: str
    line: int
    function: str

    @property
    def short(self) -> str:
        return f"{os.path.basename(self.path)}:{self.line}"

    def to_json(self) -> dict:
        return {"path": self.path, "line": self.line, "function": self.function}


@dataclass(frozen=True)
class CallPath:
    """The innermost user frames that led to a collective, innermost first."""

    frames: tuple[Frame, ...]
    digest: int
    op: str = ""
    group: str = ""

    @property
    def site(self) -> str:
        return self.frames[0].short if self.frames else "?"

    @property
    def function(self) -> str:
        return self.frames[0].function if self.frames else "?"

    def describe(self) -> str:
        return " <- ".join(f"{f.function} ({f.short})" for f in self.frames)


class CallPathCache:
    """Capture call paths cheaply: one dict lookup per collective after warm-up.

    The fingerprint digest covers the innermost ``depth`` frames (default 2:
    the collective's call site and its caller, enough to tell apart two callers
    of a shared wrapper such as `_allgather_model_parallel_status`).  For the
    report, a path also keeps ``display_depth`` frames as first seen.
    """

    def __init__(self, depth: int = 2, display_depth: int = 5, skip_dirs: tuple[str, ...] = (),
                 strict: bool = True) -> None:
        self.depth = max(1, depth)
        # strict=False: the digest covers op and group only, for programs that issue one collective
        # from different lines on different ranks on purpose (if rank == 0: bcast(x) else: bcast(None))
        self.strict = strict
        self.display_depth = max(self.depth, display_depth)
        self.skip_dirs = tuple(os.path.abspath(d) for d in (_RUNTIME_DIR, *skip_dirs))
        self._cache: dict[tuple, CallPath] = {}
        self._skip_code: dict[Any, bool] = {}
        self._internal_code: dict[Any, bool] = {}

    def _internal(self, code) -> bool:
        hit = self._internal_code.get(code)
        if hit is None:
            hit = self._internal_code[code] = is_internal_path(code.co_filename)
        return hit

    def skipped(self, code) -> bool:
        """Whether frames running `code` belong to the runtime (looked through when finding the call site)."""
        hit = self._skip_code.get(code)
        if hit is None:
            filename = os.path.abspath(code.co_filename)
            hit = filename.startswith(self.skip_dirs)
            self._skip_code[code] = hit
        return hit

    def key_of(self, frame) -> tuple:
        key: list = []
        while frame is not None and len(key) < 2 * self.depth:
            key.append(frame.f_code)
            key.append(frame.f_lineno)
            frame = frame.f_back
        return tuple(key)

    def resolve(self, frame, op: str = "", group: str = "") -> CallPath:
        """The call path of collective `op` on `group` starting at `frame` (a user frame), cached."""
        salt = f"{op}|{group}"
        key = (salt,) + self.key_of(frame)
        path = self._cache.get(key)
        if path is None:
            frames = []
            f = frame
            while f is not None and len(frames) < self.display_depth:
                code = f.f_code
                if not self._internal(code):  # runpy and the launcher: the same on every rank, noise in reports
                    frames.append(Frame(code.co_filename, f.f_lineno, getattr(code, "co_qualname", code.co_name)))
                f = f.f_back
            text = salt
            if self.strict:
                text += "|" + "|".join(f"{os.path.basename(x.path)}:{x.line}:{x.function}" for x in frames[: self.depth])
            path = CallPath(tuple(frames), zlib.crc32(text.encode()), op, group)
            self._cache[key] = path
        return path


def stack_of(frame, limit: int = 40) -> list[dict]:
    """A JSON-ready stack (innermost first) starting at `frame`."""
    out = []
    while frame is not None and len(out) < limit:
        code = frame.f_code
        out.append({"path": code.co_filename, "line": frame.f_lineno,
                    "function": getattr(code, "co_qualname", code.co_name)})
        frame = frame.f_back
    return out


def main_thread_frame() -> Any | None:
    import threading

    main = threading.main_thread()
    return sys._current_frames().get(main.ident)
