"""Pending summaries worked out in the workers, for the run's process
(issue 12): a summary left pending by a lazy extraction is worked out where
its file's syntax tree is kept, when the whole-tree pass first reads it
(:func:`~cslint.analysis.records.fill_pending`), asked ahead
(:meth:`SummaryFills.prefetch`), or taken as it comes back
(:meth:`SummaryFills.settle_ready`).

A worker serves the requests for summaries in order, but for one the run's
process waits on (:data:`URGENT_FILL`, sent by :meth:`SummaryFills.fill`):
that one goes before the prefetches queued ahead of it (:func:`next_task`),
so a single summary the pass reads does not wait for every summary asked
ahead.  Each request carries a number its answer comes back with.
"""

from __future__ import annotations

import os
from collections import deque
from typing import Optional
from multiprocessing.connection import wait as wait_for

from ..analysis.records import is_pending
from . import timeline

#: pending summaries per request :meth:`SummaryFills.prefetch` sends a worker: a
#: worker starts on them soon, and a request costs a round trip of its own
PREFETCH_BATCH = 16

#: the requests for pending summaries a worker gets: ``(number, [(path, position), ...])``, answered
#: ``(number, summaries)``; a ``URGENT_FILL`` is one the run's process waits on (:meth:`SummaryFills.fill`)
FILL, URGENT_FILL = "fill", "fill now"
FILL_KINDS = (FILL, URGENT_FILL)


def next_task(queued: deque):
    """The message a worker serves next (taken off ``queued``): the oldest,
    unless an urgent request for summaries waits among the requests for
    summaries at the head of the queue (:func:`take_urgent`).  Nothing
    overtakes a batch of files, the spans or the end: their answers come in
    order."""
    urgent = take_urgent(queued)
    return urgent if urgent is not None else queued.popleft()


def take_urgent(queued: deque, in_progress: Optional[list] = None):
    """The urgent request for summaries waiting among the requests for
    summaries at the head of ``queued``, taken off it, or None: the run's
    process waits on it, and the others are prefetches
    (:meth:`SummaryFills.prefetch`) it may want later or never.  The
    summaries it asks are struck from the prefetches still queued and from
    ``in_progress``, the keys of a prefetch the worker is working out (their
    answers give None there), so none is worked out twice."""
    for position, message in enumerate(queued):
        if message is None or message[0] not in FILL_KINDS:
            break
        if message[0] == URGENT_FILL:
            del queued[position]
            taken = set(message[1][1])
            for keys in [other[1][1] for other in queued if other is not None and other[0] == FILL] + [in_progress]:
                if keys and not taken.isdisjoint(keys):
                    keys[:] = [None if key in taken else key for key in keys]
            return message
    return None


class SummaryFills:
    """The run's side of the requests for pending summaries, mixed into
    :class:`~cslint.engine.workers.Workers`, which gives the pool of
    workers (``pool``: each with its ``index`` and ``conn``), the worker
    holding each file's pending summaries (``_deferring``: resolved path ->
    (worker index, job)), the process the run belongs to (``_owner``) and
    ``_fill_here`` (a summary worked out in this process)."""

    def _start_fills(self) -> None:
        #: worker index -> the pending summaries asked of it and not answered yet, their (resolved path,
        #: position) listed per request by its number (an urgent request's answer may come before those asked earlier:
        #: :meth:`_take_answer`)
        self._fills_asked: dict = {}
        self._requests = 0  # requests for summaries sent so far (each one's number)
        #: worker index -> the stubs :meth:`prefetch` holds back until a request is worth sending
        self._prefetches: dict = {}
        #: (resolved path, position) of each stub asked of a worker or held back for one, not settled yet
        self._prefetched: set = set()
        #: (resolved path, position) -> the facts a worker sent back for that stub, not settled yet
        self._answered: dict = {}

    def fill(self, stubs: list) -> None:
        """Work out the summaries of the pending functions ``stubs``
        (:class:`~cslint.analysis.records.PendingFuncFacts` of files this
        run's jobs extracted lazily), each where its file's syntax tree is
        kept: here, or in the worker that extracted it, all workers at once
        (those :meth:`prefetch` asked for already are waited for)."""
        if os.getpid() != self._owner:
            raise RuntimeError("pending summaries are worked out in the run's process alone")
        by_worker, here = self._by_worker(stubs, asked_only=False)
        for stub in here:
            if is_pending(stub):  # (settled already where listed twice)
                self._fill_here([stub])
        if by_worker:
            with timeline.span(f"fill {sum(len(waiting) for waiting in by_worker.values())}"):
                self._ask_workers(by_worker)

    def prefetch(self, stubs: list) -> None:
        """Ask the workers now for the summaries of the pending functions
        ``stubs`` that a :meth:`fill` will want later: they work them out
        while this process goes on, and the fill waits only for what is not
        back yet.  A summary comes back as it would to the fill (the worker
        reads only what the stub's extraction left it), and the stub is
        settled only by that fill: nothing the caller reads changes until
        then.  Requests go in batches of :data:`PREFETCH_BATCH` stubs per
        worker (the rest with the fill)."""
        if self.pool is None:
            return
        for stub in stubs:
            held = self._deferring.get(stub.path)
            if held is None or not is_pending(stub) or (stub.path, stub.position) in self._prefetched:
                continue
            self._prefetched.add((stub.path, stub.position))
            waiting = self._prefetches.setdefault(held[0], [])
            waiting.append(stub)
            if len(waiting) >= PREFETCH_BATCH:
                self._ask(held[0], self._prefetches.pop(held[0]))

    def settle_ready(self, stubs: list) -> None:
        """Settle those of the pending functions ``stubs`` whose summaries
        have come back, waiting for one at least where none has: a caller
        that can go on with part of what it asked (the demand, following
        what each summary reads while the workers work out the rest) need
        not wait for the last.  Each stub is settled as :meth:`fill` would
        settle it; the requests :meth:`prefetch` held back are sent now, a
        stub asked of no worker is filled at once, and the answers of every
        worker are taken as they come."""
        by_worker, unasked = self._by_worker(stubs, asked_only=True)
        if unasked:
            self.fill(unasked)
        if not by_worker:
            return
        for index in by_worker:
            held_back = self._prefetches.pop(index, [])
            if held_back:
                self._ask(index, held_back)
        ready = bool(unasked)
        with timeline.span(f"fill {sum(len(waiting) for waiting in by_worker.values())}"):
            while True:
                for index, waiting in by_worker.items():
                    self._take_ready_answers(index)
                    for stub in waiting:
                        if not is_pending(stub):  # (settled already: by an answer to a fill, or listed twice)
                            continue
                        if (stub.path, stub.position) in self._answered or not self._fills_asked.get(index):
                            self._settle(stub)  # (a worker asked nothing more is gone)
                            ready = True
                if ready:
                    return
                wait_for([self.pool[index].conn for index in by_worker if self._fills_asked.get(index)])

    def _by_worker(self, stubs: list, asked_only: bool) -> tuple:
        """``(worker index -> stubs, the rest)`` for those of ``stubs`` still
        pending, in their order: a stub goes with the worker that holds its
        file's tree (and, ``asked_only``, only where a worker was asked for it
        or :meth:`prefetch` holds it back for one); the rest are worked out
        here (or, ``asked_only``, asked by a :meth:`fill`)."""
        by_worker: dict = {}
        rest = []
        for stub in stubs:
            if not is_pending(stub):
                continue
            held = self._deferring.get(stub.path)
            if self.pool is None or held is None or asked_only and (stub.path, stub.position) not in self._prefetched:
                rest.append(stub)
            else:
                by_worker.setdefault(held[0], []).append(stub)
        return by_worker, rest

    def _settle(self, stub) -> None:
        """Settle the pending ``stub`` with the answer a worker sent for it,
        or, where none came (its worker is gone), work it out here."""
        key = (stub.path, stub.position)
        self._prefetched.discard(key)
        if key in self._answered:
            stub.settle(self._answered.pop(key))
        else:
            self._fill_here([stub])

    def _take_ready_answers(self, index: int) -> None:
        """Take in every answer worker ``index`` has already sent to a request
        still out, without waiting for one."""
        conn = self.pool[index].conn
        while self._fills_asked.get(index) and conn.poll() and self._take_answer(index):
            pass

    def _ask(self, index: int, stubs: list, urgent: bool = False) -> None:
        """Send worker ``index`` a request for the summaries of ``stubs``,
        ``urgent`` where this process waits on it (a worker that is gone
        leaves them to :meth:`_ask_workers`, which works them out here)."""
        self._requests += 1
        keys = [(stub.path, stub.position) for stub in stubs]
        try:
            self.pool[index].conn.send((URGENT_FILL if urgent else FILL, (self._requests, keys)))
        except OSError:
            self._prefetched.difference_update(keys)
            return
        self._fills_asked.setdefault(index, {})[self._requests] = keys

    def _take_answer(self, index: int) -> bool:
        """Receive worker ``index``'s next answer to a request for summaries
        (an urgent one overtakes those asked before it), and keep the
        summaries for the fill that settles them: those still awaited (a
        summary an urgent request took from a prefetch comes back once, None
        in the prefetch's answer; one worked out in both, as the worker
        started the prefetch first, is kept as it came first); False when
        the worker is gone (what it was asked is worked out here)."""
        asked = self._fills_asked.get(index)
        if not asked:
            return False
        try:
            done, value = self.pool[index].conn.recv()
        except (EOFError, OSError):
            for keys in asked.values():
                self._prefetched.difference_update(keys)
            asked.clear()
            return False
        if not done:
            raise value
        number, summaries = value
        for key, variants in zip(asked.pop(number), summaries):
            if variants is not None and key in self._prefetched and key not in self._answered:
                self._answered[key] = variants
        return True

    def _take_every_answer(self) -> None:
        """Receive every fill answer not received yet: the pipes carry a
        batch's answer next."""
        for index, asked in self._fills_asked.items():
            while asked and self._take_answer(index):
                pass

    def _ask_workers(self, by_worker: dict) -> None:
        """Ask each worker for the pending summaries it holds (worker index ->
        stubs), all at once, with what :meth:`prefetch` held back for it, and
        settle them with the answers (to these requests or earlier ones)."""
        for index, waiting in by_worker.items():
            # what is awaited goes first (a worker may have prefetches queued ahead of it),
            # what prefetch held back and this fill does not want after it; the answers back
            # already are taken first, so the worker is asked again for no summary it sent
            self._take_ready_answers(index)
            wanted = {(stub.path, stub.position) for stub in waiting}
            held_back = [stub for stub in self._prefetches.pop(index, []) if (stub.path, stub.position) not in wanted]
            awaited = [stub for stub in waiting if (stub.path, stub.position) not in self._answered]
            self._prefetched.update(wanted)
            if awaited:
                self._ask(index, awaited, urgent=True)
            if held_back:
                self._ask(index, held_back)
        for index, waiting in by_worker.items():
            for stub in waiting:
                if not is_pending(stub):  # (listed twice: settled already, and a settled stub has no position)
                    continue
                key = (stub.path, stub.position)
                while key not in self._answered and key in self._prefetched and self._take_answer(index):
                    pass
                self._settle(stub)
