"""Canonical orders worked out ahead of the whole-tree fixpoint, in a
forked helper process.

The fixpoint (:mod:`cslint.analysis.program`) runs in the run's own process
after the workers are done, so the other cores sit idle while it runs.  A
good part of its work is putting atom sets in canonical order
(:func:`~cslint.analysis.divergence.canonical_order`: digests of whole
atom structures where ranks tie), a function of each set alone.  A helper
forked once the facts are in shares every set with the run's process, works
the orders out in about the order the fixpoint meets the sets
(:func:`~cslint.analysis.stepreads.atom_sets`) and sends each back as
positions in the set's own iteration order, named by the set's ``id``: the
run's process holds every one of those sets until the helper is closed, so
no other object can carry that ``id`` meanwhile.  The fixpoint takes an
order from the helper when it has come, and works it out itself otherwise:
the result is the same either way, only the time differs.

First of all, the helper works out which functions read each table entry
(:func:`~cslint.analysis.stepreads.readers_of`, a walk over every atom): the
fixpoint steps every function in its first round and needs them only from
its second, so the helper's core does that walk while the first round runs,
from the first function on.  If the first round ends before the helper
does, the fixpoint walks from the last function down until the two meet
(:meth:`OrdersAhead.readers`): on a busy machine the helper may get little
of a core.  The orders of the sets a step evaluates come next, from the
function the first round has reached (``OrdersAhead.stepping``): an order
the fixpoint worked out itself already would be sent for nothing.  The
orders of the conditions the hazards ask about after the fixpoint come
last.  The positions both processes need of each other (where the first
round is, how far each one's walk has got) are shared through an anonymous
shared mapping; what the helper walked is in its message, so a position
both or neither took is walked here once the message has come.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import pickle
import select
import signal
import sys
from typing import Optional

try:
    import fcntl
except ImportError:  # not on every system; nor is a helper forked there
    fcntl = None

from . import timeline
from ..analysis.divergence import canonical_positions
from ..analysis.program import Program
from ..analysis.stepreads import CONDITION_SETS, STEP_SETS, atom_sets, readers_of, stepped

#: orders per message from the helper
CHUNK = 256
#: the positions shared with the helper (int64 each): the function the first
#: round steps, the first function the helper's walk has not taken, and the
#: last one this process's walk took
STEPPING, HELPER_NEXT, PARENT_LOW = range(3)
#: the pipe's size, where the system lets it be set
PIPE_BYTES = 1 << 20


class OrdersAhead:
    """The orders a helper process has sent so far (``Program.orders_ahead``)."""

    def __init__(self, pid: int, reader: int, shared):
        self.pid = pid
        self.shared = shared  # the positions shared with the helper (STEPPING, HELPER_NEXT, PARENT_LOW)
        self.reader = reader  # the pipe from the helper, non-blocking (None once it is done)
        self.pending = bytearray()  # received, not yet a whole message
        self.positions: dict = {}  # id(atom set) -> positions
        #: (how many functions from the first the helper walked, readers_of them), once sent
        self.readers_found: Optional[tuple] = None

    @classmethod
    def start(cls, program: Program) -> Optional["OrdersAhead"]:
        """A helper forked to order ``program``'s atom sets; None where
        processes are not forked (the fixpoint then orders every set itself)."""
        if not sys.platform.startswith("linux"):
            return None
        try:
            read_end, write_end = os.pipe()
        except OSError:
            return None
        try:  # room for the helper to run ahead while the fixpoint reads nothing
            fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
        except (AttributeError, OSError):  # no such setting here: the default size
            pass
        try:
            mapping = mmap.mmap(-1, 3 * ctypes.sizeof(ctypes.c_int64))  # anonymous, shared with the child
            shared = (ctypes.c_int64 * 3).from_buffer(mapping)
            shared[PARENT_LOW] = len(stepped(program))
            pid = os.fork()
        except OSError:
            os.close(read_end)
            os.close(write_end)
            return None
        if pid == 0:  # the helper
            try:
                os.close(read_end)
                signal.signal(signal.SIGINT, signal.SIG_IGN)  # the run's process handles Ctrl-C
                timeline.become("helper")
                _send_orders(program, write_end, shared)
                timeline.write()
            finally:
                os._exit(0)  # no clean-up of the run's state: it is the run's process's
        os.close(write_end)
        os.set_blocking(read_end, False)
        return cls(pid, read_end, shared)

    def stepping(self, position: int) -> None:
        """The fixpoint's first round steps the function at ``position``."""
        self.shared[STEPPING] = position

    def get(self, atoms: frozenset) -> Optional[list]:
        """The canonical positions of ``atoms`` if the helper sent them."""
        found = self.positions.get(id(atoms))
        if found is None and self.reader is not None:
            self._receive()
            found = self.positions.get(id(atoms))
        if found is not None and len(found) != len(atoms):
            return None
        return found

    def readers(self, program: Program, funcs: list) -> dict:
        """:func:`~cslint.analysis.stepreads.readers_of` ``funcs`` (a position
        may be listed twice for an entry): the helper's walk from the first
        function, and this process's from the last one down, until they meet."""
        shared = self.shared
        here: dict = {}
        low = len(funcs)  # this process walked the functions from here on
        if self.reader is not None:
            self._receive()
        while self.readers_found is None and self.reader is not None and low > shared[HELPER_NEXT]:
            low -= 1
            shared[PARENT_LOW] = low
            readers_of(program, funcs, (low,), here)
        while self.readers_found is None and self.reader is not None:
            select.select([self.reader], [], [])
            self._receive()
        walked, found = self.readers_found if self.readers_found is not None else (0, {})
        self.readers_found = None  # the lists below are extended in place
        # what neither walk took (a helper that ended early, a position each
        # thought the other one had)
        readers_of(program, funcs, range(walked, low), here)
        for key, positions in here.items():
            found.setdefault(key, []).extend(positions)
        return found

    def _receive(self) -> None:
        """Take in what the helper has sent by now, without waiting."""
        pending = self.pending
        while True:
            try:
                data = os.read(self.reader, PIPE_BYTES)
            except BlockingIOError:
                break
            except OSError:
                data = b""
            if not data:  # the helper is done
                self._stop_reading()
                break
            pending += data
        start = 0
        while len(pending) - start >= 4:
            size = int.from_bytes(pending[start:start + 4], "little")
            if len(pending) - start - 4 < size:
                break
            message = pickle.loads(pending[start + 4:start + 4 + size])
            if type(message) is dict:
                self.positions.update(message)
            else:  # ("readers", how many functions from the first, readers_of them)
                self.readers_found = message[1:]
            start += 4 + size
        del pending[:start]

    def _stop_reading(self) -> None:
        if self.reader is not None:
            os.close(self.reader)
            self.reader = None

    def close(self) -> None:
        self._stop_reading()
        try:
            os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            os.waitpid(self.pid, 0)
        except OSError:
            pass
        self.positions = {}


def _send_orders(program: Program, out: int, shared) -> None:
    digests: dict = {}
    seen: set = set()
    try:
        with timeline.span("readers"):
            _write_message(out, ("readers",) + _walk_readers(program, shared))
        with timeline.span("orders of the steps' sets"):
            _send_positions(atom_sets(program, (STEP_SETS,), seen, lambda: shared[STEPPING]), digests, out)
        with timeline.span("orders of the conditions"):
            _send_positions(atom_sets(program, (CONDITION_SETS,), seen), digests, out)
    except OSError:  # the run's process stopped listening
        pass


def _walk_readers(program: Program, shared) -> tuple:
    """(n, readers_of the first n functions): up to the first one the run's
    process took (see OrdersAhead.readers)."""
    funcs = stepped(program)
    readers: dict = {}
    position = 0
    while position < len(funcs) and position < shared[PARENT_LOW]:
        shared[HELPER_NEXT] = position + 1
        readers_of(program, funcs, (position,), readers)
        position += 1
    return position, readers


def _send_positions(sets, digests: dict, out: int) -> None:
    chunk: dict = {}
    for atoms in sets:
        chunk[id(atoms)] = canonical_positions(list(atoms), digests)
        if len(chunk) >= CHUNK:
            _write_message(out, chunk)
            chunk = {}
    if chunk:
        _write_message(out, chunk)


def _write_message(out: int, chunk: dict) -> None:
    data = pickle.dumps(chunk, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(len(data).to_bytes(4, "little") + data)
    while view:
        view = view[os.write(out, view):]
