"""The per-process sanitizer state: ledgers, divergences, watchdog, state files.

One `Sanitizer` per process (all wrapped communicators of a rank share it, so
its state file shows everything the rank did).  It holds one `Ledger` per
group (`cslint.runtime.ledger`): the wrappers enter every collective there,
and the ledger decides which calls the ranks check.

On a divergence (a failed check) or a stall (a collective waiting longer
than ``timeout`` seconds), the rank writes ``<report_dir>/rank<R>.json``
(status, current collective with its call path and the main thread's stack,
the last ``history`` collectives of each group), waits ``grace`` seconds so
the other ranks can write theirs, and aborts the job (``on_error="abort"``)
or raises `CollectiveDivergence` (``on_error="raise"``).  The watchdog also
watches the report directory: when another rank reports, this rank writes its
own state too, so the merged report covers every rank.
"""

from __future__ import annotations

import atexit
import json
import os
import socket
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from .fingerprint import CallPath, CallPathCache, main_thread_frame, stack_of
from .ledger import ROLE_NAMES, SENDS, STAMP_MAGIC, Ledger, PyLedger, is_stamped

#: Exit status of a job the sanitizer aborted.
ABORT_EXIT_CODE = 86
#: The first bytes of every stamp the sanitizer puts on the wire (see `cslint.runtime.ledger`).
WIRE_TAG = STAMP_MAGIC

ENV_ENABLE = "CSLINT_SANITIZE"
ENV_REPORT_DIR = "CSLINT_REPORT_DIR"
ENV_TIMEOUT = "CSLINT_SANITIZE_TIMEOUT"


class CollectiveDivergence(RuntimeError):
    """Ranks disagreed on a collective (raised when ``on_error="raise"``)."""

    def __init__(self, message: str, kind: str, detail: dict | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.detail = detail or {}


# A ledger record of one collective, a plain tuple:
# (callpath (which knows op and group), sequence number, payload type, start time, role,
#  order of the records across the process's ledgers)
REC_PATH, REC_SEQ, REC_KIND, REC_START, REC_ROLE, REC_ORDER = range(6)


def record_json(rec: tuple, index: int) -> dict:
    path: CallPath = rec[REC_PATH]
    kind = rec[REC_KIND]
    if not isinstance(kind, str):
        kind = getattr(kind, "__name__", str(kind))
    return {
        "index": index, "op": path.op, "group": path.group, "seq": rec[REC_SEQ],
        "site": path.site, "function": path.function, "callpath": [f.to_json() for f in path.frames],
        "digest": path.digest, "payload": kind, "t_start": rec[REC_START],
        "role": ROLE_NAMES.get(rec[REC_ROLE], "?"),
    }


class Sanitizer:
    """Ledgers, divergence handling and the watchdog of one rank.

    `carry_every` / `check_every`: a window of that many object collectives /
    other collectives is checked even when no call is suspicious (see
    `cslint.runtime.ledger`).
    """

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
        carry_every: int = 16,
        check_every: int = 64,
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
        self.history_limit = max(1, history)
        self.carry_every = carry_every
        self.check_every = check_every
        self.paths = CallPathCache(depth=depth, skip_dirs=skip_dirs, strict=strict_site)
        self.ledgers: dict[str, Any] = {}  # group label -> Ledger
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

    def ledger(self, group: str):
        """The ledger of `group` (one per group label, shared by every wrapper of this rank)."""
        ledger = self.ledgers.get(group)
        if ledger is None:
            resolve = self.paths.resolve

            def resolver(frame, op, _group=group):
                return resolve(frame, op, _group)

            # the C ledger keys call sites by at most `max_depth` frames
            cls = Ledger if self.paths.depth <= getattr(Ledger, "max_depth", self.paths.depth) else PyLedger
            ledger = cls(group, resolver, self.paths.skipped, self.mismatch, depth=self.paths.depth,
                            history=self.history_limit, carry_every=self.carry_every,
                            check_every=self.check_every)
            self.ledgers[group] = ledger
        return ledger

    def in_flight(self) -> tuple | None:
        """The record of the collective this rank is waiting in (the latest one started), or None."""
        best = None
        for ledger in list(self.ledgers.values()):
            rec = ledger.current()
            if rec is not None and (best is None or rec[REC_ORDER] > best[REC_ORDER]):
                best = rec
        return best

    # ------------------------------------------------------- divergences
    def mismatch(self, ledger, received, checked: bool, symmetric: bool) -> list:
        """A failed check on `ledger` (the ledger's `on_mismatch`): report, then abort or raise.

        Returns the payloads without their stamps when neither happens."""
        rec = ledger.current()
        mine = ledger.stamp()
        peers = []
        for item in received:
            if is_stamped(item):
                peers.append({"stamp": item[0][2:].hex(), "agrees": checked and item[0] == mine})
            else:
                peers.append({"stamp": None, "agrees": not checked})
        disagreeing = sum(1 for p in peers if not p["agrees"])
        if checked and symmetric:
            what = f"{disagreeing} of {len(peers)} ranks' messages carry another digest or none"
        elif checked:
            what = "the message this rank received carries another digest or none (its sender is on another path)"
        else:
            what = (f"{disagreeing} of {len(peers)} messages carry a check this rank did not expect "
                    "(their senders are off the path this rank is on)")
        detail = {"mine": mine[2:].hex() if checked else None, "peers": peers, "group": ledger.group,
                  "window_start": ledger.window_start}
        if rec is None:  # a ledger used without enter(): nothing to name
            self.fail("mismatch", f"rank {self.rank}: collectives on group '{ledger.group}' diverge: {what}", detail)
            return [item[1] if is_stamped(item) else item for item in received]
        path, seq = rec[REC_PATH], rec[REC_SEQ]
        message = (f"rank {self.rank}: collective #{seq} on group '{path.group}' diverges: this rank is in "
                   f"{path.op} at {path.describe()}; {what}")
        if seq > ledger.window_start:
            message += (f"; the ranks last agreed before #{ledger.window_start}, so one of the collectives "
                        f"#{ledger.window_start}-#{seq} differs")
        sent_only = [r for r in ledger.records() if r[REC_SEQ] >= ledger.window_start and r[REC_ROLE] == SENDS
                     and r is not rec]
        if sent_only:
            first = sent_only[0]
            message += (f"; this rank only sent in {first[REC_PATH].op} #{first[REC_SEQ]} at "
                        f"{first[REC_PATH].describe()} (a root cannot compare there), and its peers disagree "
                        "with it since")
            detail["sent_only"] = [r[REC_SEQ] for r in sent_only]
        self.fail("mismatch", message, detail)
        return [item[1] if is_stamped(item) else item for item in received]

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
        current = self.in_flight()
        frame = main_thread_frame()
        ledgers = list(self.ledgers.values())
        records = sorted((r for ledger in ledgers for r in ledger.records()
                          if current is None or r[REC_ORDER] != current[REC_ORDER]), key=lambda r: r[REC_ORDER])
        total = sum(ledger.seq for ledger in ledgers) - (1 if current is not None else 0)
        return {
            "version": 2,
            "rank": self.rank,
            "world_size": self.world_size,
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "status": status,
            "message": message,
            "time": time.time(),
            "started": self.t0,
            "timeout": self.timeout,
            "ledger": getattr(Ledger, "implementation", "?"),
            "current": None if current is None else dict(record_json(current, total),
                                                         waited=time.time() - current[REC_START]),
            "stack": stack_of(frame) if frame is not None else [],
            "history": [record_json(r, total - len(records) + i) for i, r in enumerate(records)],
            "collectives": total,
            "history_limit": self.history_limit,
            "groups": {label: list(ranks) for label, ranks in self.groups.items()},
            "sequence": {ledger.group: ledger.seq for ledger in ledgers},
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
            current = self.in_flight()
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


_SANITIZERS: dict[int, Sanitizer] = {}  # one per process, keyed by pid (fork-safe)


def _sanitizer_for(rank: int, world: int, *, report_dir: str | None = None, timeout: float | None = None,
                   grace: float = 1.0, history: int = 64, depth: int = 2, on_error: str = "abort",
                   abort: Callable[[int], None] | None = None, strict_site: bool = True,
                   first_timeout: float = 30.0, carry_every: int = 16, check_every: int = 64) -> Sanitizer:
    """The process's sanitizer (one per process and report directory)."""
    if report_dir is None:
        report_dir = os.environ.get(ENV_REPORT_DIR) or "cslint-report"
    if timeout is None:
        try:
            timeout = float(os.environ.get(ENV_TIMEOUT, "2"))
        except ValueError:
            timeout = 2.0
    sanitizer = _SANITIZERS.get(os.getpid())
    if sanitizer is None or sanitizer.report_dir != report_dir:
        sanitizer = Sanitizer(rank, world, report_dir=report_dir, timeout=timeout, grace=grace, history=history,
                              depth=depth, on_error=on_error, abort=abort, strict_site=strict_site,
                              first_timeout=first_timeout, carry_every=carry_every, check_every=check_every)
        _SANITIZERS[os.getpid()] = sanitizer
    return sanitizer
