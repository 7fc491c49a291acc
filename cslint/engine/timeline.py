"""An opt-in timeline of one run, for whoever measures where its wall clock
goes: with ``CSLINT_TIMELINE=FILE`` set, each process of the run (the run's
own, its workers, the ordering helper) appends to ``FILE`` one JSON line per
span it timed: who (``run``, ``worker-N``, ``helper``), what, start and end
on the system's monotonic clock (comparable across the processes of one
machine) and the CPU its thread spent meanwhile.  A worker times each task
it is handed, so the gaps between them are its idle time; the run's process
times its phases and its waits on the workers.  ``bench/timeline.py`` runs
``cslint check`` with it and prints the table.

Unset (the default), :func:`span` hands back one shared object whose
``with`` does nothing, and nothing is written.
"""

from __future__ import annotations

import json
import os
import time

#: the file the spans are appended to, or None: no timeline
PATH = os.environ.get("CSLINT_TIMELINE") or None

_spans: list = []  # (what, start, end, CPU seconds) of this process, not written yet
_who = ["run"]


class _Span:
    __slots__ = ("what", "start", "cpu")

    def __init__(self, what: str):
        self.what = what

    def __enter__(self):
        self.start = time.monotonic()
        self.cpu = time.thread_time()
        return self

    def __exit__(self, *exc) -> None:
        _spans.append((self.what, self.start, time.monotonic(), time.thread_time() - self.cpu))


class _Untimed:
    __slots__ = ()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None


_UNTIMED = _Untimed()


def span(what: str):
    """A context manager timing ``what`` in this process (a no-op unless
    the timeline is on)."""
    return _Span(what) if PATH is not None else _UNTIMED


def mark(what: str) -> None:
    """An instant of this process worth seeing on the timeline (with the
    CPU the process has spent so far)."""
    if PATH is not None:
        now = time.monotonic()
        _spans.append((what, now, now, time.process_time()))


def become(who: str) -> None:
    """This process is ``who`` from now on (a forked child: what its parent
    timed before the fork is the parent's to write)."""
    if PATH is not None:
        _who[0] = who
        _spans.clear()


def write() -> None:
    """Append this process's spans to the timeline's file, in one write."""
    if PATH is None or not _spans:
        return
    pid = os.getpid()
    lines = "".join(json.dumps({"who": _who[0], "pid": pid, "what": what, "start": start, "end": end,
                                "cpu": round(cpu, 6)}) + "\n" for what, start, end, cpu in _spans)
    _spans.clear()
    descriptor = os.open(PATH, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(descriptor, lines.encode())
    finally:
        os.close(descriptor)
