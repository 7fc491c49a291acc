"""What crosses the workers' pipes in one run, and what it costs.

Runs ``cslint check --no-cache --format json TREE`` in this process with
the pipes' ``send``/``recv`` timed around their pickling, and prints, per
process (the run's own and each worker): its CPU (user + system), the
thread CPU its worker spent extracting files and filling pending
summaries, and per direction and kind of message (``batch`` jobs sent,
``FileFacts`` answers, ``fill`` requests, ``FuncFacts`` fill answers) the
messages, the megabytes pickled and the thread CPU of pickling (``dumps``,
the sender's) or unpickling (``loads``, the receiver's).  With ``--jobs 1``
nothing crosses a pipe: compare the CPU totals of the two to see what
running in two processes costs (docs/internals.md, "What crosses the pipe").

    .venv/bin/python bench/pipe_traffic.py [TREE] [--jobs 2]

Default tree: vLLM as bench/realtree.py pins it.  Timings are one run's,
so take several on a busy machine; the bytes and counts do not move.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import sys
import tempfile
import threading
import time
from multiprocessing import connection
from multiprocessing.reduction import ForkingPickler

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from realtree import pinned  # noqa: E402  (bench/ is first on sys.path)

from cslint.cli import main as cslint_main  # noqa: E402
from cslint.engine import workers  # noqa: E402


class Traffic:
    """Per (direction, kind): [messages, bytes, pickling CPU seconds], in this process."""

    def __init__(self):
        self.lock = threading.Lock()
        self.table: dict = {}
        self.work = {"extract": 0.0, "fill": 0.0}

    def add(self, key: tuple, size: int, seconds: float) -> None:
        with self.lock:
            entry = self.table.setdefault(key, [0, 0, 0.0])
            entry[0] += 1
            entry[1] += size
            entry[2] += seconds


TRAFFIC = Traffic()


def _kind(message) -> str:
    """What a message is: a task's kind, or the class of an answer's first fact."""
    if isinstance(message, tuple) and len(message) == 2:
        head, body = message
        if isinstance(head, str):
            return head
        if head is True and isinstance(body, list) and body:
            return type(body[0]).__name__
    return "other"


def _send(self, obj) -> None:
    started = time.thread_time()
    buffer = ForkingPickler.dumps(obj)
    TRAFFIC.add(("dumps", _kind(obj)), len(buffer), time.thread_time() - started)
    self._send_bytes(buffer)


def _recv(self):
    buffer = self._recv_bytes().getbuffer()
    started = time.thread_time()
    obj = ForkingPickler.loads(buffer)
    TRAFFIC.add(("loads", _kind(obj)), len(buffer), time.thread_time() - started)
    return obj


def _timed(method, key: str):
    def timed(self, *args, **kwargs):
        started = time.thread_time()
        try:
            return method(self, *args, **kwargs)
        finally:
            TRAFFIC.work[key] += time.thread_time() - started
    return timed


def _record(path: str, who: str) -> None:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    line = {"who": who, "user": usage.ru_utime, "sys": usage.ru_stime, **TRAFFIC.work,
            "traffic": [[list(key), value] for key, value in sorted(TRAFFIC.table.items())]}
    with open(path, "a") as out:
        out.write(json.dumps(line) + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", nargs="?", default=None, help="default: the pinned vLLM tree of bench/realtree.py")
    parser.add_argument("--jobs", type=int, default=None, help="--jobs of the run (default: cslint's own)")
    args = parser.parse_args(argv)
    tree = os.path.abspath(args.tree or pinned("vllm") or parser.error("the pinned vLLM tree cannot be had; pass a tree"))
    connection.Connection.send = _send
    connection.Connection.recv = _recv
    workers._WorkerProcess.parse_batch = _timed(workers._WorkerProcess.parse_batch, "extract")
    workers._WorkerProcess.fill = _timed(workers._WorkerProcess.fill, "fill")
    with tempfile.TemporaryDirectory(prefix="cslint-pipe-") as tmp:
        log = os.path.join(tmp, "processes.jsonl")
        serve = workers._serve

        def serve_and_record(*serve_args):
            try:
                serve(*serve_args)
            finally:  # the worker's figures, as its reader ends
                _record(log, "worker")

        workers._serve = serve_and_record
        command = ["check", "--no-cache", "--format", "json", tree]
        if args.jobs is not None:
            command += ["--jobs", str(args.jobs)]
        started = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            cslint_main(command)
        wall = time.perf_counter() - started
        _record(log, "run")  # the workers wrote theirs as they stopped (the run joins them)
        with open(log) as lines:
            processes = [json.loads(line) for line in lines]
    print(f"tree: {tree}  jobs={args.jobs or 'default'}  wall {wall:.2f} s")
    total = 0.0
    for process in sorted(processes, key=lambda p: p["who"] != "run"):
        cpu = process["user"] + process["sys"]
        total += cpu
        print(f"{process['who']:<7} CPU {cpu:6.2f} s (sys {process['sys']:.2f})  "
              f"extracting {process['extract']:.2f} s  filling {process['fill']:.2f} s")
        for (direction, kind), (messages, size, seconds) in process["traffic"]:
            print(f"    {direction:<6} {kind:<12} {messages:6d} messages {size / 1e6:8.2f} MB {seconds:7.3f} s")
    print(f"CPU of every process: {total:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
