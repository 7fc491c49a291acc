"""The per-process sanitizer state: sequence numbers, history, watchdog, state files.

One `Sanitizer` per process (all wrapped communicators of a rank share it, so
its state file shows everything the rank did).  Wrappers call `begin()` before
a collective and `end()` after it; `check()` compares the fingerprints the
ranks exchanged.

On a divergence (fingerprints differ) or a stall (a collective waiting longer
than ``timeout`` seconds), the rank writes ``<report_dir>/rank<R>.json``
(status, current collective with its call path and the main thread's stack,
the last ``history`` collectives), waits ``grace`` seconds so the other ranks
can write theirs, and aborts the job (``on_error="abort"``) or raises
`CollectiveDivergence` (``on_error="raise"``).  The watchdog also watches the
report directory: when another rank reports, this rank writes its own state
too, so the merged report covers every rank.
"""

from __future__ import annotations

import atexit
import collections
import json
import os
import socket
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from .fingerprint import CallPath, CallPathCache, main_thread_frame, stack_of

#: Exit status of a job the sanitizer aborted.
ABORT_EXIT_CODE = 86
#: Marker of sanitizer messages on the wire.
WIRE_TAG = "cslint.rt/1"

ENV_ENABLE = "CSLINT_SANITIZE"
ENV_REPORT_DIR = "CSLINT_REPORT_DIR"
ENV_TIMEOUT = "CSLINT_SANITIZE_TIMEOUT"


class CollectiveDivergence(RuntimeError):
    """Ranks disagreed on a collective (raised when ``on_error="raise"``)."""

    def __init__(self, message: str, kind: str, detail: dict | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.detail = detail or {}


# A record of one collective, kept as a plain tuple on the hot path:
# (callpath (which knows op and group), sequence number, payload type, start time)
REC_PATH, REC_SEQ, REC_KIND, REC_START = range(4)
SEQ_BITS = 40  # fingerprint = site digest << SEQ_BITS | sequence number


def fingerprint(digest: int, seq: int) -> int:
    return (digest << SEQ_BITS) | seq


def split_fingerprint(fp) -> tuple:
    if isinstance(fp, int):
        return fp >> SEQ_BITS, fp & ((1 << SEQ_BITS) - 1)
    return None, None


def record_json(rec: tuple, index: int) -> dict:
    path: CallPath = rec[REC_PATH]
    kind = rec[REC_KIND]
    if not isinstance(kind, str):
        kind = getattr(kind, "__name__", str(kind))
    return {
        "index": index, "op": path.op, "group": path.group, "seq": rec[REC_SEQ],
        "site": path.site, "function": path.function, "callpath": [f.to_json() for f in path.frames],
        "digest": path.digest, "payload": kind, "t_start": rec[REC_START],
    }


class Sanitizer:
    """Fingerprints, sequence numbers and the watchdog of one rank."""

    def __init__(
        self,
        rank: int,
        world_size: int = 0,
        *,
        report_dir: str | None = None,
        timeout: float = 2.0,
        grace: float = 1.0,
        history: int = 64,
        depth: int = 2,
        on_error: str = "abort",
        abort: Callable[[int], None] | None = None,
        strict_site: bool = True,
        skip_dirs: tuple[str, ...] = (),
        first_timeout: float = 30.0,
    ) -> None:
        if on_error not in ("abort", "raise"):
            raise ValueError("on_error must be 'abort' or 'raise'")
        self.rank = rank
        self.world_size = world_size
        self.report_dir = report_dir
        self.timeout = timeout
        self.first_timeout = first_timeout
        self.grace = grace
        self.on_error = on_error
        self.abort_fn = abort
        self.strict_site = strict_site
        self.paths = CallPathCache(depth=depth, skip_dirs=skip_dirs)
        self.history: collections.deque = collections.deque(maxlen=history)
        self.seq_cells: dict[str, list[int]] = {}  # group -> [next sequence number]
        self.current: tuple | None = None
        self.groups: dict[str, tuple[int, ...]] = {}  # group label -> member ranks, where known
        self.reported: str | None = None
        self.t0 = time.time()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._watchdog: threading.Thread | None = None
        if report_dir:
            os.makedirs(report_dir, exist_ok=True)
        if timeout and timeout > 0:
            self._watchdog = threading.Thread(target=self._watch, name="cslint-watchdog", daemon=True)
            self._watchdog.start()
        # a rank that leaves normally still tells the report how far it got
        atexit.register(self.close)

    # ------------------------------------------------------------ hot path
    # The wrappers inline the fast path (see wrappers.py); these helpers serve
    # the slower collectives and the tests.
    def begin(self, op: str, group: str, payload: Any = None, *, kind: str | None = None) -> tuple:
        path = self.paths.capture(1, op, group)
        cell = self.seq_cells.setdefault(group, [0])
        seq = cell[0]
        cell[0] = seq + 1
        rec = (path, seq, kind if kind is not None else type(payload), time.time())
        self.current = rec
        return rec

    def end(self, rec: tuple) -> None:
        self.history.append(rec)
        self.current = None

    def check(self, rec: tuple, peer_fps: list) -> None:
        """Compare this rank's fingerprint with the ones the peers sent."""
        mine = fingerprint(rec[REC_PATH].digest, rec[REC_SEQ])
        for peer in peer_fps:
            if peer != mine:
                self.divergence(rec, peer_fps)
                return

    # ------------------------------------------------------- divergences
    def divergence(self, rec: tuple, peer_fps: list) -> None:
        def describe(fp):
            digest, seq = split_fingerprint(fp)
            if digest is None:
                return {"unsanitized": repr(fp)[:80]}
            return {"digest": digest, "seq": seq, "same_site": digest == rec[REC_PATH].digest}

        detail = {"mine": describe(fingerprint(rec[REC_PATH].digest, rec[REC_SEQ])),
                  "peers": [describe(fp) for fp in peer_fps]}
        others = sum(1 for d in detail["peers"] if d.get("digest") != rec[REC_PATH].digest)
        path = rec[REC_PATH]
        message = (f"rank {self.rank}: collective #{rec[REC_SEQ]} on group '{path.group}' diverges: this rank "
                   f"is in {path.op} at {path.describe()}; {others} peer(s) are at another site")
        self.fail("mismatch", message, detail)

    def fail(self, status: str, message: str, detail: dict | None = None) -> None:
        """Write this rank's state, then abort the job or raise."""
        first = self.reported is None
        self.dump(status, message=message, detail=detail)
        print(f"[cslint.runtime] {message}", file=sys.stderr, flush=True)
        if self.on_error == "raise":
            raise CollectiveDivergence(message, status, detail)
        if first:
            self._abort_after_grace()

    def _abort_after_grace(self) -> None:
        time.sleep(self.grace)
        sys.stderr.flush()
        sys.stdout.flush()
        if self.abort_fn is not None:
            try:
                self.abort_fn(ABORT_EXIT_CODE)
            finally:
                os._exit(ABORT_EXIT_CODE)
        os._exit(ABORT_EXIT_CODE)

    # ------------------------------------------------------------ state
    def state(self, status: str, message: str = "", detail: dict | None = None) -> dict:
        current = self.current
        frame = main_thread_frame()
        history = list(self.history)
        total = sum(cell[0] for cell in self.seq_cells.values()) - (1 if current is not None else 0)
        return {
            "version": 1,
            "rank": self.rank,
            "world_size": self.world_size,
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "status": status,
            "message": message,
            "time": time.time(),
            "started": self.t0,
            "timeout": self.timeout,
            "current": None if current is None else dict(record_json(current, total),
                                                         waited=time.time() - current[REC_START]),
            "stack": stack_of(frame) if frame is not None else [],
            "history": [record_json(r, total - len(history) + i) for i, r in enumerate(history)],
            "collectives": total,
            "history_limit": self.history.maxlen,
            "groups": {label: list(ranks) for label, ranks in self.groups.items()},
            "sequence": {group: cell[0] for group, cell in self.seq_cells.items()},
            "detail": detail or {},
        }

    def dump(self, status: str, message: str = "", detail: dict | None = None) -> str | None:
        with self._lock:
            if self.reported is not None and status in ("peer", "finished"):
                return None
            self.reported = status
            if not self.report_dir:
                return None
            data = self.state(status, message, detail)
            path = os.path.join(self.report_dir, f"rank{self.rank}.json")
            tmp = path + f".{os.getpid()}.tmp"
            with open(tmp, "w") as fh:
                json.dump(data, fh, indent=1)
            os.replace(tmp, path)
            return path

    def close(self) -> None:
        """Normal end of the rank: record its final state (idempotent; also runs at exit)."""
        self._stop.set()
        if self.reported is None:
            try:
                self.dump("finished")
            except OSError:  # the report directory went away (e.g. a test's temporary dir)
                self.reported = "finished"

    # ---------------------------------------------------------- watchdog
    def _peer_reported(self) -> bool:
        if not self.report_dir:
            return False
        try:
            names = os.listdir(self.report_dir)
        except OSError:
            return False
        mine = f"rank{self.rank}.json"
        for name in names:
            if name.startswith("rank") and name.endswith(".json") and name != mine:
                try:
                    with open(os.path.join(self.report_dir, name)) as fh:
                        status = json.load(fh).get("status")
                except (OSError, ValueError):
                    continue
                if status in ("mismatch", "timeout"):
                    return True
        return False

    def _watch(self) -> None:
        period = min(0.1, self.timeout / 10)
        peer_check_every = max(1, int(0.2 / period))
        tick = 0
        while not self._stop.wait(period):
            tick += 1
            current = self.current
            # the first collective of a group also pays for connection set-up (NCCL communicators
            # are created there), so it gets a longer allowance
            limit = self.timeout if current is None or current[REC_SEQ] else max(self.timeout, self.first_timeout)
            if self.reported is None and current is not None and time.time() - current[REC_START] > limit:
                path = current[REC_PATH]
                message = (f"rank {self.rank}: waited {time.time() - current[REC_START]:.1f} s in "
                           f"{path.op} (group '{path.group}', #{current[REC_SEQ]}) at {path.describe()}")
                self.dump("timeout", message=message)
                print(f"[cslint.runtime] {message}", file=sys.stderr, flush=True)
                self._abort_after_grace()
                return
            if self.reported is None and tick % peer_check_every == 0 and self._peer_reported():
                self.dump("peer", message=f"rank {self.rank}: state at another rank's report")
