"""Pending summaries worked out ahead on idle cores, while the run's process
works alone.

A worker keeps the pending summaries of the files it extracted lazily
(:class:`~cslint.analysis.records.PendingFuncFacts`) and works one out when
the run's process asks (:meth:`~cslint.engine.workers.Workers.fill`), which
waits meanwhile: on vLLM 0.33.0 about 300 requests, 2,000 summaries, while
the program is built and the demand followed (:mod:`cslint.analysis.demand`),
the run's process on one core and the workers' cores idle between requests.
From the last prefilter round's end on
(:meth:`~cslint.engine.workers.Workers.work_ahead`), each worker forks a
child that works its pending summaries out in the order below at the idle
scheduling class (``SCHED_IDLE``: it runs only on a core nothing else
wants, so it never delays the run's process, a worker answering a request,
the ordering helper or anyone else's work) and sends each, pickled, back to
the worker; a request for one that has come is answered with those bytes,
which the run's process unpickles.  The run's process asks for the same
summaries at the same moments and settles them as before, so only its
waits change.  (Working ahead in the worker itself was tried: on a loaded
machine it took the core of the run's process and made the requests wait
for the worker's turn, so the pass took longer.)

The order: first the pending functions that a function analysed in depth in
the same file calls by name (on vLLM 86 % of them are read by the pass),
then the others, each file as it was extracted.
"""

from __future__ import annotations

import os
import pickle
import queue
import signal
import threading
from collections import deque
from multiprocessing.reduction import ForkingPickler

from . import timeline
from ..analysis.facts import walked_summary

#: whether this system can run a child at the idle scheduling class
CAN_IDLE = hasattr(os, "fork") and hasattr(os, "sched_setscheduler") and hasattr(os, "SCHED_IDLE")
#: the header of a message from the child: the length of the pickle that follows
HEADER = 4


class SummariesAhead:
    """A worker's pending summaries in the order to work them out ahead,
    and the child working them out, while it does."""

    def __init__(self):
        #: (path, position) of the pending summaries, in the order to work them out ahead
        self.first: deque = deque()
        self.later: deque = deque()
        #: (path, position) -> the pickled facts the child sent
        self.ready: dict = {}
        #: (path, position) of the summaries handed over (the child's copy is dropped)
        self.taken: set = set()
        self.child = None  # the child's process id, while it runs
        #: the thread reading the child's pipe as it comes (a pipe holds 64 KB:
        #: unread, the child would wait), and what it read, in order (b"": the end)
        self.drain = None
        self.chunks: queue.SimpleQueue = queue.SimpleQueue()
        self.received = bytearray()  # taken from ``chunks``, not yet a whole message

    def note(self, path: str, facts, pending: dict) -> None:
        """A file extracted lazily: ``facts`` its facts, ``pending`` its
        pending summaries by position."""
        called: set = set()
        for fn in facts.functions:
            if fn.deep:
                called |= fn.called_names
        functions = facts.functions
        for position in pending:
            name = functions[position].qualname.rpartition(".")[2]
            (self.first if name in called else self.later).append((path, position))

    def start(self, deferred: dict, close: tuple) -> bool:
        """Fork the child (``deferred``: the worker's pending summaries,
        path -> {position: (FunctionInfo, called names)}; ``close``: the
        descriptors the child closes first, the worker's pipe to the run's
        process).  In the child: True, once the summaries are worked out
        and sent (it then ends); in the worker: False."""
        if self.child is not None or not CAN_IDLE:
            return False
        keys = [key for key in list(self.first) + list(self.later)
                if key not in self.taken and key not in self.ready and key[1] in deferred.get(key[0], ())]
        self.first.clear()
        self.later.clear()
        if not keys:
            return False
        try:
            read_end, write_end = os.pipe()
        except OSError:
            return False
        try:
            pid = os.fork()
        except OSError:
            os.close(read_end)
            os.close(write_end)
            return False
        if pid:
            os.close(write_end)
            self.child = pid
            self.drain = threading.Thread(target=_drain, args=(read_end, self.chunks), daemon=True)
            self.drain.start()
            return False
        os.close(read_end)
        for descriptor in close:
            os.close(descriptor)
        self.keys, self.out, self.deferred = keys, write_end, deferred
        return True

    def work(self) -> None:
        """The child: each summary worked out and sent, at the idle class."""
        try:
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        except OSError:  # not allowed here: nothing to do that would not take a busy core
            return
        timeline.become(timeline.who() + " ahead")
        sent = [0]
        started = timeline.started()

        def stopped(_signum, _frame) -> None:
            timeline.ended(started, f"{sent[0]} of {len(self.keys)} summaries ahead, stopped")
            timeline.write()
            os._exit(0)

        signal.signal(signal.SIGTERM, stopped)
        for path, position in self.keys:
            self.send(path, position)
            sent[0] += 1
        timeline.ended(started, f"{sent[0]} summaries ahead")

    def send(self, path: str, position: int) -> None:
        """The child: the summary at ``(path, position)`` worked out and
        sent (called at the depth of the stack the worker works one out
        at when asked: where a summary walk nests past the recursion limit
        does not depend on who asked)."""
        info, _called_names = self.deferred[path][position]
        try:
            facts = ForkingPickler.dumps(walked_summary(info))
        except Exception:  # the worker works it out when asked, and raises it then
            return
        message = pickle.dumps((path, position, bytes(facts)), protocol=pickle.HIGHEST_PROTOCOL)
        view = memoryview(len(message).to_bytes(HEADER, "little") + message)
        while view:
            view = view[os.write(self.out, view):]

    def receive(self) -> None:
        """Take in what the child has sent so far."""
        if self.child is None:
            return
        ended = False
        while True:
            try:
                chunk = self.chunks.get_nowait()
            except queue.Empty:
                break
            if not chunk:
                ended = True
                break
            self.received += chunk
        data = self.received
        start = 0
        while len(data) - start >= HEADER:
            size = int.from_bytes(data[start:start + HEADER], "little")
            if len(data) - start - HEADER < size:
                break
            path, position, facts = pickle.loads(data[start + HEADER:start + HEADER + size])
            if (path, position) not in self.taken:
                self.ready[(path, position)] = facts
            start += HEADER + size
        del data[:start]
        if ended:  # (a message the child was stopped in the middle of is dropped)
            try:
                os.waitpid(self.child, 0)
            except OSError:
                pass
            self.child, self.drain, self.received = None, None, bytearray()

    def take(self, deferred: dict, path: str, position: int):
        """The facts of the summary at ``(path, position)``, asked for by the
        run's process: the child's pickle of them if it came (see
        :meth:`receive`), else worked out now."""
        key = (path, position)
        self.taken.add(key)
        sent = self.ready.pop(key, None)
        if sent is not None:
            return sent
        info, _called_names = deferred[path][position]
        return walked_summary(info)

    def stop(self) -> None:
        """Stop the child (what it sent so far is kept for the requests to come)."""
        if self.child is None:
            return
        try:
            os.kill(self.child, signal.SIGTERM)
        except OSError:
            pass
        self.drain.join()  # to the end of the pipe
        self.receive()


def _drain(descriptor: int, chunks: queue.SimpleQueue) -> None:
    """A worker's thread: the child's pipe read as it comes, into ``chunks``."""
    try:
        while True:
            chunk = os.read(descriptor, 1 << 20)
            chunks.put(chunk)
            if not chunk:
                return
    except OSError:
        chunks.put(b"")
    finally:
        os.close(descriptor)
