"""The per-group ledger: which collective this rank is in, and when the ranks compare notes.

Every collective of a group goes through the group's `Ledger`.  On every call
it records the call path (op, group, call site and caller: see
`cslint.runtime.fingerprint`), the sequence number and the start time, and
folds them into a running *window digest*.  The ranks compare window digests
(a *check*) only on some calls, so a collective-bound loop pays for a frame
lookup and a few integer operations, not for a message:

- **Suspicious calls.**  The ledger remembers, for each call path, the call
  path that followed it last time on this group.  A call whose path is not
  the remembered successor of the previous call's path (and the first call
  of a group) is checked.  Ranks that have issued the same collectives so far
  remember the same successors, so they decide alike.  Where ranks part, at
  least one of them is off its remembered path, checks, and the other sees a
  stamp it did not expect (or misses one): both report.  A loop that repeats
  the same collectives is never suspicious after its first round.
- **Sampled calls.**  A window of ``carry_every`` object collectives (or
  ``check_every`` collectives of other kinds) is checked even when nothing is
  suspicious.  Where the ranks part, the rule above already checks the first
  call that differs; the sampled checks bound how long a difference that
  went unseen there stays unseen (a rank that caught its
  `CollectiveDivergence` and carried on, a reduction whose peer had no
  allgather to exchange stamps through).
- **Owed checks.**  After a rooted collective (broadcast, gather, scatter), a
  rank that only sent (the broadcast root) could not compare; the next
  collective of the group in which every rank both sends and receives is
  checked, so the root learns whether its peers agreed.

How a check travels depends on the collective:

- object collectives (allgather, alltoall, broadcast, gather, scatter of
  Python objects) carry a *stamp* — ``(stamp_bytes, payload)`` instead of the
  payload — in the message they send anyway; unchecked calls send the bare
  payload and receive bare payloads (a stamp arriving where none was expected
  is a divergence);
- reductions, buffer and tensor collectives cannot carry one: when such a
  call is checked, the stamps go through one small allgather first
  (``exchange``); when it is not, its fingerprint waits in the window for the
  group's next check;
- barriers are replaced by that allgather (which synchronises as well) and
  always check.

The window digest restarts after a check in which every rank saw every
other rank's stamp (an allgather, an alltoall, an exchange); rooted
collectives leave it running, so the owed check covers them.

This module is the reference implementation.  ``cslint.runtime._ledger`` (C,
built at install) implements the same class with the same results, a few
hundred nanoseconds per collective; `Ledger` is that one when it was built
(``CSLINT_RUNTIME_PURE=1`` selects this one).
"""

from __future__ import annotations

import collections
import itertools
import os
import sys
import time
from collections.abc import Callable
from typing import Any

#: What a rank does in a collective (the ledger's `enter` argument).
SYMMETRIC = 0  # every rank sends and receives from every rank (allgather, alltoall, barrier)
RECEIVES = 1  # rooted, this rank receives a peer's stamp (broadcast non-root, gather root, scatter non-root)
LAZY = 2  # cannot carry a stamp (reductions, buffer and tensor collectives): an exchange checks it
SENDS = 3  # rooted, this rank only sends (broadcast root, gather non-root, scatter root)

ROLE_NAMES = {SYMMETRIC: "all", RECEIVES: "receives", LAZY: "unstamped", SENDS: "sends"}

_ORDER = itertools.count()  # order of records across the ledgers of this process

#: The first two bytes of a stamp; the rest is the 64-bit window digest, little-endian.
STAMP_MAGIC = b"\xc5\x1b"
STAMP_LEN = 10
_M64 = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15


def mix(h: int, x: int) -> int:
    """Fold `x` into the 64-bit digest `h` (the C implementation computes the same)."""
    return (h ^ ((x + _GOLDEN + ((h << 6) & _M64) + (h >> 2)) & _M64)) & _M64


def make_stamp(digest: int) -> bytes:
    return STAMP_MAGIC + digest.to_bytes(8, "little")


def is_stamped(item: Any) -> bool:
    """Whether a received item is a ``(stamp, payload)`` pair."""
    if type(item) is not tuple or len(item) != 2:
        return False
    head = item[0]
    return type(head) is bytes and len(head) == STAMP_LEN and head[:2] == STAMP_MAGIC


def stamp_digest(stamp: bytes) -> int:
    return int.from_bytes(stamp[2:], "little")


class PyLedger:
    """Pure-Python ledger of one group (see the module docstring).

    `resolver(frame, op)` returns the `CallPath` of a call whose innermost user
    frame is `frame`; `skip(code)` says whether a frame belongs to the runtime
    (wrappers, patches) and is looked through; `on_mismatch(ledger, received,
    checked, symmetric)` handles a failed check (it raises, aborts, or returns
    the payloads without stamps).
    """

    implementation = "python"

    def __init__(self, group: str, resolver: Callable, skip: Callable, on_mismatch: Callable, *, depth: int = 2,
                 history: int = 64, carry_every: int = 16, check_every: int = 64) -> None:
        self.group = group
        self.depth = max(1, depth)
        self.carry_every = max(1, carry_every)
        self.check_every = max(1, check_every)
        self._resolver = resolver
        self._skip = skip
        self._on_mismatch = on_mismatch
        self._skip_cache: dict[int, tuple[Any, bool]] = {}
        # call key -> (site index, CallPath, the code objects, kept alive so that their ids stay theirs)
        self._sites: dict[tuple, tuple[int, Any, tuple]] = {}
        self._successor: list[int] = []
        self.seq = 0
        self._digest = 0
        self._unfolded: list[tuple[int, int]] = []  # (site digest, seq) not yet folded into _digest
        self.window = 0  # collectives since the window (re)started
        self.window_start = 0  # sequence number of the window's first collective
        self.owed = False
        self._last_site = -1
        self._records: collections.deque = collections.deque(maxlen=max(1, history))
        self._in_flight = False

    # ---------------------------------------------------------------- calls
    def _skipped(self, code) -> bool:
        hit = self._skip_cache.get(id(code))
        if hit is None or hit[0] is not code:
            hit = self._skip_cache[id(code)] = (code, bool(self._skip(code)))
        return hit[1]

    def _site(self, op: str, frame) -> tuple[int, Any]:
        while frame is not None and self._skipped(frame.f_code):
            frame = frame.f_back
        codes, key = [], [op]
        walk = frame
        while walk is not None and len(codes) < self.depth:
            codes.append(walk.f_code)
            key.append(id(walk.f_code))
            key.append(walk.f_lasti)
            walk = walk.f_back
        key_t = tuple(key)
        hit = self._sites.get(key_t)
        if hit is None:
            path = self._resolver(frame, op)
            hit = self._sites[key_t] = (len(self._successor), path, tuple(codes))
            self._successor.append(-1)
        return hit[0], hit[1]

    def enter(self, op: str, payload: Any = None, role: int = SYMMETRIC, *, _frame=None) -> bool:
        """Record entry into collective `op`; returns whether this call is checked."""
        site, path = self._site(op, _frame if _frame is not None else sys._getframe(1))
        seq = self.seq
        self.seq = seq + 1
        self._unfolded.append((path.digest, seq))  # folded when the digest is needed (a check)
        self.window += 1
        previous = self._last_site
        suspicious = previous < 0 or self._successor[previous] != site
        if previous >= 0:
            self._successor[previous] = site
        self._last_site = site
        rooted = role in (RECEIVES, SENDS)
        limit = self.check_every if role == LAZY else self.carry_every
        check = suspicious or self.window >= limit or (self.owed and not rooted)
        if rooted:
            self.owed = True
        self._records.append((path, seq, type(payload), time.time(), role, next(_ORDER)))
        self._in_flight = True
        return check

    @property
    def digest(self) -> int:
        """The window digest: ``mix(mix(h, site digest), seq)`` over the window's collectives, from 0."""
        if self._unfolded:
            h = self._digest
            for site_digest, seq in self._unfolded:
                h = mix(mix(h, site_digest), seq)
            self._digest = h
            self._unfolded.clear()
        return self._digest

    def stamp(self) -> bytes:
        """The stamp of the window up to the current collective."""
        return make_stamp(self.digest)

    def reset(self) -> None:
        """Every rank has seen every stamp of the window and they agreed: start a new window."""
        self._digest = 0
        self._unfolded.clear()
        self.window = 0
        self.window_start = self.seq
        self.owed = False

    def leave(self) -> None:
        self._in_flight = False

    def unwrap(self, received: list, checked: bool, symmetric: bool) -> list:
        """Check received items and strip their stamps (`checked`: this rank sent one)."""
        if checked:
            mine = self.stamp()
            out = []
            for item in received:
                if not is_stamped(item) or item[0] != mine:
                    return self._mismatch(received, checked, symmetric)
                out.append(item[1])
            if symmetric:
                self.reset()
            return out
        for item in received:
            if is_stamped(item):
                return self._mismatch(received, checked, symmetric)
        return received if type(received) is list else list(received)

    def _mismatch(self, received, checked: bool, symmetric: bool) -> list:
        out = self._on_mismatch(self, received, checked, symmetric)
        if symmetric:
            self.reset()
        return out

    def allgather(self, inner: Callable, op: str) -> Callable:
        """`inner` (an object allgather returning a list) with the whole check inlined.

        The common case (a known call site, looked up by its two innermost
        frames, and no check due) is `enter` written out, without calls; any
        other case goes through `enter`, which gives the same results."""
        enter, unwrap, leave, stamp = self.enter, self.unwrap, self.leave, self.stamp
        getframe, now, order = sys._getframe, time.time, _ORDER
        sites, skip_cache, successor, records = self._sites, self._skip_cache, self._successor, self._records
        unfolded = self._unfolded
        fast = self.depth == 2
        magic = STAMP_MAGIC

        def allgather(*args, **kwargs):
            if not args and len(kwargs) == 1:  # the object passed by keyword (comm.allgather(sendobj=x))
                args, kwargs = tuple(kwargs.values()), {}
            if not args:
                raise TypeError(f"{op}() takes the object to gather")
            obj, args = args[0], args[1:]
            frame = getframe(1)
            back = frame.f_back
            hit = None
            if fast and back is not None:
                code = frame.f_code
                skip = skip_cache.get(id(code))
                if skip is not None and skip[0] is code and not skip[1]:
                    hit = sites.get((op, id(code), frame.f_lasti, id(back.f_code), back.f_lasti))
            if hit is not None and self._last_site >= 0 and successor[self._last_site] == hit[0] \
                    and self.window + 1 < self.carry_every and not self.owed:
                # a known call site on the remembered path, no sampled or owed check due
                site, path = hit[0], hit[1]
                seq = self.seq
                self.seq = seq + 1
                unfolded.append((path.digest, seq))
                self.window += 1
                self._last_site = site
                records.append((path, seq, type(obj), now(), SYMMETRIC, next(order)))
                self._in_flight = True
                try:
                    received = inner(obj, *args, **kwargs)
                    if type(received) is not list:
                        received = list(received)
                    for item in received:
                        if type(item) is tuple and len(item) == 2 and type(item[0]) is bytes \
                                and item[0][:2] == magic:
                            return unwrap(received, False, True)
                    return received
                finally:
                    self._in_flight = False
            checked = enter(op, obj, SYMMETRIC, _frame=frame)
            try:
                received = inner((stamp(), obj) if checked else obj, *args, **kwargs)
                if type(received) is not list:
                    received = list(received)
                return unwrap(received, checked, True)
            finally:
                leave()

        allgather.__name__ = op
        return allgather

    def unstamped(self, inner: Callable, op: str, exchange: Callable | None) -> Callable:
        """`inner`, a collective that cannot carry a stamp (a reduction, a buffer collective): when the
        ledger checks a call, ``exchange(ledger)`` compares the stamps before `inner` runs."""
        enter, leave, getframe = self.enter, self.leave, sys._getframe

        def call(*args, **kwargs):
            checked = enter(op, args[0] if args else None, LAZY, _frame=getframe(1))
            try:
                if checked and exchange is not None:
                    exchange(self)
                return inner(*args, **kwargs)
            finally:
                leave()

        call.__name__ = op
        return call

    # ---------------------------------------------------------------- state
    def current(self) -> tuple | None:
        """``(path, seq, payload type, start time, role, order)`` of the collective in flight, or None."""
        return self._records[-1] if self._in_flight and self._records else None

    def records(self) -> list[tuple]:
        """The last `history` collectives (the one in flight included), oldest first."""
        return list(self._records)

    @property
    def history_limit(self) -> int:
        return self._records.maxlen


def _select() -> type:
    if os.environ.get("CSLINT_RUNTIME_PURE", "").strip() not in ("", "0"):
        return PyLedger
    try:
        from ._ledger import Ledger as CLedger
    except ImportError:
        return PyLedger
    return CLedger


#: The ledger class in use: the C one when it was built, else `PyLedger`.
Ledger = _select()
