"""Parsing and fact extraction, in worker processes.

A run forks its workers once, before it reads any file (each worker starts
small and holds only what it parses), and hands them the run's
:class:`RunContext` as it starts them.  What the tree's own group getters
define (:mod:`cslint.analysis.groupgetters`) is known once the first
prefilter round has read the last file; the workers extract the files chosen
before that meanwhile, noting which group spans each extraction asked, and
extract again, when the spans come (:meth:`Workers.learn_spans`), those that
asked one the getters changed.  Each :class:`ParseJob`
names one file's input; a worker parses it, extracts its facts
(:func:`cslint.analysis.facts.extract_file_facts`) and, with a cache file,
stores them there itself (the parent would pickle them a second time, one
file after another).  Fewer than :data:`PARALLEL_THRESHOLD` files, or
``--jobs 1``, are parsed in the run's own process.

Bad input never raises: a syntax error, an undecodable file, or source
nested too deeply comes back as facts with an ``error`` (CSL001).
"""

from __future__ import annotations

import ast
import dataclasses
import gc
import os
import pickle
import queue
import signal
import sys
import threading
from collections import deque
from dataclasses import dataclass
from multiprocessing.connection import wait as wait_for
from multiprocessing.reduction import ForkingPickler
from typing import Optional

from ..config import Settings
from ..decoding import SourceDecodeError, decode_source
from ..presets import Knowledge, load_presets
from ..analysis.facts import extract_file_facts, summarised_or_empty
from ..analysis.records import FileFacts, FuncFacts
from . import dropped, timeline
from .cache import store_pickle
from .fills import FILL_KINDS, URGENT_FILL, SummaryFills, next_task, take_urgent
from .reducers import FACT_REDUCERS

# The facts a worker sends back go through the pipe's pickler, which looks a
# reducer up by type before anything else (:mod:`cslint.engine.reducers`).
for _record_class, _reducer in FACT_REDUCERS.items():
    ForkingPickler.register(_record_class, _reducer)

PARALLEL_THRESHOLD = 64  # fewer files than this are parsed in-process

# A task is a few files: one file per task costs a round trip each, one
# large task at the end of a round keeps one worker busy while the others
# wait for the next round.
BATCH = 8  # files per task sent to a worker, at most
BATCH_BYTES = 48 << 10  # and at most about this much source
#: tasks sent to a worker and not back yet, at most: the one it works on and
#: the next, so it never waits for the run's process between two
IN_FLIGHT = 2

# No process of a run collects cycles while it extracts (the collector is
# off, as in the run's process): extraction leaves no syntax tree or
# self-calling closure in a cycle (tests/test_memory_bounds.py; on vLLM a
# whole run leaves about 8 k objects to the collector), so a collection only
# walked what was made since the one before for next to no garbage.  In the
# run's own process (jobs=1) that was every fact kept since, 1.3 s of a 24 s
# run of vLLM; in a worker, the syntax trees it keeps for the next patches
# (Workers.keep_trees) and its caches, 0.5-0.7 s of a worker's 8-9 s there,
# collecting every MB of source.


@dataclass(frozen=True)
class RunContext:
    """What every job of a run shares: the presets, by name and loaded.
    A worker forked from the run inherits it; one started afresh (where
    processes are spawned) loads the presets again by name, with the group
    spans the tree's getters define (:attr:`~cslint.presets.World.named`)."""

    preset_names: tuple
    knowledge: Knowledge

    @classmethod
    def of(cls, preset_names, named: tuple = ()) -> "RunContext":
        knowledge = load_presets(list(preset_names))
        if named:
            knowledge = dataclasses.replace(knowledge, world=knowledge.world.with_named(named))
        return cls(tuple(preset_names), knowledge)

    def __reduce__(self):
        return (RunContext.of, (self.preset_names, self.knowledge.world.named))


@dataclass(frozen=True)
class ParseJob:
    """One file's input to fact extraction (the fact cache's key covers all of it)."""

    path: str  # the resolved path (the facts cite it)
    data: bytes
    settings: Settings
    module: str  # the dotted module name
    deep_names: frozenset  # wrapper names: functions calling one are analysed in depth
    already_deep: Optional[frozenset] = None  # a re-analysis patch: positions analysed in depth before
    store: Optional[str] = None  # the cache file the worker writes the facts to
    #: the qualified names of the functions to extract, whatever they reach, in
    #: a file read only for what they raise (None: an ordinary job)
    raising: Optional[frozenset] = None
    #: leave the summaries that write no field pending (the process keeps
    #: what works them out: :meth:`Workers.fill`); never with a cache file,
    #: whose facts a later run reads with no syntax tree at hand
    lazy: bool = False


def extract(job: ParseJob, context: RunContext, trees: Optional[dict] = None,
            deferred: Optional[dict] = None) -> FileFacts:
    """The facts of one job (and their cache entry, when the job names one).
    ``trees``: resolved path -> (bytes, syntax tree, call scans, the world
    they were made under) of the files parsed before, read and added to
    (see :meth:`Workers.keep_trees`);
    ``deferred``: resolved path -> {position: (FunctionInfo, called names)} of the pending
    summaries, added to for a lazy job."""
    facts = _extract(job, context, trees, deferred)
    if job.store:
        store_pickle(job.store, facts)
    return facts


def _extract(job: ParseJob, context: RunContext, trees: Optional[dict] = None,
             deferred: Optional[dict] = None) -> FileFacts:
    path, data, module = job.path, job.data, job.module
    kept = trees.get(path) if trees is not None else None
    scanned = None  # the call scans kept with the tree (extract_file_facts)
    world = context.knowledge.world
    try:
        if kept is not None and (kept[0] is data or kept[0] == data):
            # A re-analysis on the tree of the file's first extraction:
            # extraction reads a tree and never changes it (it starts from a
            # fresh ModuleContext, as on a fresh parse).  The call scans of its
            # functions read the tree, the settings and the knowledge (the
            # group spans of its world among them), never which functions are
            # deep: those the first extraction made serve a patch, and a whole
            # extraction again under the same world (a file whose functions
            # were all summarised then, deeper now: FileFacts.skipped).
            tree = kept[1]
            if job.already_deep is not None or kept[3] is world:
                scanned = kept[2]
            else:  # extracted again with the group spans learnt since: scanned anew
                scanned = []
                trees[path] = (data, tree, scanned, world)
        else:
            tree = ast.parse(data, filename=path)
            if trees is not None and job.raising is None:
                scanned = []
                trees[path] = (data, tree, scanned, world)
    except SyntaxError as exc:
        facts = FileFacts(path=path, module=module)
        facts.error = describe_syntax_error(exc)
        message = (exc.msg or "").lower()
        if "unicode" in message or "utf-8" in message or "decode" in message:
            try:  # the decoder of cslint fix says what is wrong in the same words
                decode_source(data)
                facts.error = f"cannot decode source: {exc.msg}"
            except SourceDecodeError as problem:
                facts.error = str(problem)
        facts.error_line = exc.lineno or 1
        facts.error_column = exc.offset or 1
        return facts
    except (ValueError, UnicodeDecodeError) as exc:
        facts = FileFacts(path=path, module=module)
        facts.error = f"cannot decode source: {exc}"
        return facts
    except (RecursionError, MemoryError):
        facts = FileFacts(path=path, module=module)
        facts.error = "source too deeply nested or too large to parse"
        return facts
    pending = {} if job.lazy and deferred is not None else None
    try:
        facts = extract_file_facts(path, data, job.settings, context.knowledge, tree=tree, module=module,
                                   deep_names=job.deep_names, already_deep=job.already_deep,
                                   raising=job.raising, deferred=pending, scanned=scanned)
        if pending:
            deferred[path] = pending
        return facts
    except RecursionError:
        facts = FileFacts(path=path, module=module)
        facts.error = "source too deeply nested to analyse"
        return facts


def fill_variants(deferred: dict, path: str, position: int) -> FuncFacts:
    """The facts of a pending summary, from what its extraction kept (an
    empty summary where the walk nests past the recursion limit, as at
    once: :func:`~cslint.analysis.facts.summarised_or_empty`)."""
    info, called_names = deferred[path][position]
    return summarised_or_empty(info, called_names, position)


def describe_syntax_error(exc: SyntaxError) -> str:
    message = f"syntax error: {exc.msg}"
    newer = f"{sys.version_info.major}.{sys.version_info.minor}"
    text = (exc.text or "").strip()
    if text.startswith(("type ", "def ", "class ")) and "[" in text.split("(")[0] or text.startswith("type "):
        message += f" (this may be syntax newer than the running Python {newer})"
    elif "invalid syntax" in exc.msg or "unexpected" in exc.msg:
        message += f" (if the file targets a newer Python than {newer}, run cslint with that Python)"
    return message


# -- the worker processes -------------------------------------------------------------


class _WorkerProcess:
    """A worker's own state: the run's context and the syntax trees of the
    files it parsed that a re-analysis patch may come for (resolved path ->
    (bytes, tree, the call scans of its functions, their world); see :meth:`Workers.keep_trees`)."""

    def __init__(self, context: RunContext):
        self.context = context
        self.trees: dict = {}
        self.deferred: dict = {}  # resolved path -> {position: (FunctionInfo, called names)} of its pending summaries
        #: until the group spans of the tree are known: resolved path -> (the
        #: job, the groups its extraction asked the span of); None after
        self.before_spans: Optional[dict] = {}

    def parse_batch(self, jobs: list) -> list:
        if self.before_spans is None:
            return [extract(job, self.context, self.trees, self.deferred) for job in jobs]
        out = []
        knowledge = self.context.knowledge
        for job in jobs:
            # a world of its own per job: what it was asked is what this extraction read
            knowledge.world = knowledge.world.with_named(knowledge.world.named)
            out.append(extract(job, self.context, self.trees, self.deferred))
            self.before_spans[job.path] = (job, knowledge.world.asked())
        return out

    def learn_spans(self, named: tuple) -> list:
        """The group spans of the tree (:meth:`Workers.learn_spans`): the
        facts of the files extracted before them that asked the span of a
        group ``named`` changes, extracted again (on the trees kept)."""
        knowledge = self.context.knowledge
        changed = knowledge.world.changed_spans(named)
        # in place: the pending summaries of the files extracted so far hold
        # this knowledge, and are worked out with the spans learnt
        knowledge.world = knowledge.world.with_named(named)
        earlier, self.before_spans = self.before_spans or {}, None
        again = [job for job, asked in earlier.values() if not asked.isdisjoint(changed)]
        for job in again:
            self.deferred.pop(job.path, None)
        return [extract(job, self.context, self.trees, self.deferred) for job in again]

    def fill(self, wanted: list) -> list:
        """The facts of the pending summaries ``[(path, position), ...]``
        (None for a None there: one an urgent request took, :func:`~cslint.engine.fills.take_urgent`)."""
        return [None if key is None else fill_variants(self.deferred, *key) for key in wanted]

    def keep_trees(self, paths: frozenset) -> None:
        self.trees = {path: kept for path, kept in self.trees.items() if path in paths}


#: In a worker process, its state (set as it starts); None in the run's own
#: process, which never reads it.
_PROCESS: Optional[_WorkerProcess] = None


def _worker_start(context: RunContext) -> None:
    """A worker's start.  Worker processes run with the cyclic collector
    off, like the parent, and never collect (see above): what extraction
    allocates is freed by reference counting.  The inherited objects are
    frozen, so a collection someone asks for walks only the worker's own.

    Ctrl-C reaches every process of the terminal's group: the parent alone
    handles it (and stops the workers), so a worker ignores it instead of
    printing a traceback; SIGTERM ends a worker plainly, whatever handler
    the parent had when it forked."""
    global _PROCESS
    _PROCESS = _WorkerProcess(context)
    if timeline.PATH is not None:
        import multiprocessing

        timeline.become(multiprocessing.current_process().name.replace("cslint-", ""))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if _CAN_BLOCK:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)  # blocked by the parent while it forked
    gc.freeze()


def _serve(conn, context: RunContext, parent_ends: list) -> None:
    """A worker process: tasks come in order on ``conn`` (a batch of
    :class:`ParseJob` to extract, answered with their facts or the exception
    it raised; the paths whose trees to keep, not answered), until the run's
    process closes its end.  One thread reads the tasks as they come and
    another sends the answers, so neither the run's process nor this one
    waits for the other to read a pipe: the run's process reads answers
    between the files its prefilter chooses."""
    for end in parent_ends:  # the run's ends of the pipes, inherited by the fork
        end.close()
    _worker_start(context)
    inbox: queue.SimpleQueue = queue.SimpleQueue()
    outbox: queue.SimpleQueue = queue.SimpleQueue()

    def receive() -> None:
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                message = None
            inbox.put(message)
            if message is None:
                return

    def answer() -> None:
        while True:
            reply = outbox.get()
            try:
                try:
                    conn.send(reply)
                except (pickle.PicklingError, TypeError, AttributeError) as exc:  # an exception that does not pickle
                    conn.send((False, RuntimeError(f"{reply[1]!r} ({exc})")))
            except OSError:  # the run's process is gone or stopped listening
                return

    threading.Thread(target=receive, daemon=True).start()
    threading.Thread(target=answer, daemon=True).start()
    queued: deque = deque()
    while True:
        if not queued:
            queued.append(inbox.get())
        _take_arrived(inbox, queued)  # what came meanwhile: an urgent request goes before the requests for summaries queued ahead
        message = next_task(queued)
        if message is None:
            timeline.write()
            return
        kind, payload = message
        if kind == "keep":
            _PROCESS.keep_trees(payload)
            continue
        if kind == "spans" and not payload[1]:  # nothing changed: nothing to answer
            _PROCESS.learn_spans(payload[0])
            continue
        filling = kind in FILL_KINDS
        timed = timeline.span(kind if kind == "spans" else f"fill {len(payload[1])}" if filling
                              else f"{kind} {len(payload)}")
        timed.__enter__()  # (no frame more: the extraction's stack is as deep as untimed)
        try:
            if kind == "spans":
                outbox.put((True, _PROCESS.learn_spans(payload[0])))
                continue
            if filling:  # (the request's number, then its answers: urgent ones overtake the others)
                answers = _PROCESS.fill(payload[1]) if kind == URGENT_FILL else \
                    _prefetch_overtaken(payload[1], inbox, queued, outbox)
                outbox.put((True, (payload[0], answers)))
                continue
            outbox.put((True, _PROCESS.parse_batch(payload)))
        except Exception as exc:  # the run's process raises it, as if it had extracted the batch itself
            outbox.put((False, exc))
        finally:
            timed.__exit__()


def _take_arrived(inbox: queue.SimpleQueue, queued: deque) -> bool:
    """Move the messages that have come to ``inbox`` onto ``queued``; whether any had."""
    arrived = False
    while True:
        try:
            queued.append(inbox.get_nowait())
        except queue.Empty:
            return arrived
        arrived = True


def _prefetch_overtaken(keys: list, inbox: queue.SimpleQueue, queued: deque, outbox: queue.SimpleQueue) -> list:
    """The summaries of a prefetch, ``keys`` (see :meth:`_WorkerProcess.fill`),
    worked out one at a time: an urgent request that comes meanwhile (the
    run's process waits on it) is answered between two of them, its answer
    sent before this one's, and the summaries it asks are struck from the
    rest of this one (:func:`~cslint.engine.fills.take_urgent`).  An urgent
    request then waits for one summary, not for the whole batch in
    progress; each summary is what it would be in any order."""
    answers = []
    for position in range(len(keys)):
        while _take_arrived(inbox, queued):  # (nothing came: no urgent request waits, next_task took none)
            urgent = take_urgent(queued, keys)
            while urgent is not None:
                outbox.put((True, (urgent[1][0], _PROCESS.fill(urgent[1][1]))))
                urgent = take_urgent(queued, keys)
        answers += _PROCESS.fill(keys[position:position + 1])  # (the key read now: an urgent request may strike it)
    return answers


#: Held back while the workers start: a worker forked with the parent's
#: handlers would otherwise raise in the middle of its start-up.
_STOP_SIGNALS = frozenset((signal.SIGINT, signal.SIGTERM))
_CAN_BLOCK = hasattr(signal, "pthread_sigmask")


class _BrokenWorker(RuntimeError):
    """A worker process ended without answering."""


class _Worker:
    """The run's end of one worker process: its pipe, the tasks sent to it
    and not answered yet (their positions in the round's jobs, oldest first),
    and the tasks that can go to it alone (patches on the trees it keeps)."""

    def __init__(self, index: int, process, conn):
        self.index = index
        self.process = process
        self.conn = conn
        self.in_flight: deque = deque()
        self.pinned: deque = deque()


class Workers(SummaryFills):
    """The worker processes of one run, started once, before the run reads
    any file: forked from a small parent, each worker holds only what it
    parses (a pool started per round was forked from a parent holding every
    file's bytes and facts, and paid the start-up each round).

    Each worker has a pipe of its own, so the run's process decides which
    worker does what: a worker keeps the syntax tree of each file it parses,
    and a re-analysis patch of that file goes to that worker, which runs it
    on the tree instead of parsing the same bytes again (see
    :meth:`keep_trees`); every other task goes to a worker with fewer than
    :data:`IN_FLIGHT` tasks in hand, so a task waits in the run's process
    until a worker can start it."""

    def __init__(self, jobs: int, files: int, context: RunContext):
        self.jobs = jobs
        self.context = context
        #: the workers (:class:`_Worker`), or None: the run's own process parses
        self.pool: Optional[list] = None
        #: resolved path -> (bytes, syntax tree, call scans, their world) of the files parsed in-process
        #: that a re-analysis patch may parse again (see keep_trees)
        self._trees: dict = {}
        #: resolved path -> the index of the worker that parsed it last (and keeps its tree)
        self._holder: dict = {}
        #: resolved path -> {position: (FunctionInfo, called names)} of the pending summaries of the files parsed in-process
        self._deferred: dict = {}
        #: resolved path -> (the index of the worker holding its pending summaries, its job)
        self._deferring: dict = {}
        #: whether the group spans the tree's getters define are known (:meth:`learn_spans`)
        self.spans_known = False
        #: whether a worker was sent a job before they were
        self._sent_before_spans = False
        self._owner = os.getpid()
        self._start_fills()
        if jobs <= 1 or files < PARALLEL_THRESHOLD:
            return
        if _CAN_BLOCK:
            previous_mask = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
        try:
            try:
                import multiprocessing

                forking = sys.platform.startswith("linux")
                mp_context = multiprocessing.get_context("fork" if forking else None)
                self.pool = []
                for index in range(jobs):
                    here, there = mp_context.Pipe()
                    # a fork inherits the run's ends of the pipes made so far: the worker closes them
                    ends = [worker.conn for worker in self.pool] + [here] if forking else []
                    process = mp_context.Process(target=_serve, args=(there, context, ends), daemon=True,
                                                 name=f"cslint-worker-{index}")
                    process.start()
                    there.close()
                    self.pool.append(_Worker(index, process, here))
            finally:
                if _CAN_BLOCK:  # a signal that came meanwhile is delivered here, to the parent
                    signal.pthread_sigmask(signal.SIG_SETMASK, previous_mask)
        except (OSError, RuntimeError):  # no processes available: work here
            self.close()
        except BaseException:  # Ctrl-C while starting
            self.close()
            raise

    def learn_spans(self, named: tuple) -> None:
        """The group spans the tree's own getters define
        (:func:`~cslint.analysis.groupgetters.learned_spans`), known from now
        on.  A worker sent jobs before extracted them with the spans of the
        presets alone, noting which spans each asked: it extracts again those
        that asked a span ``named`` changes, and their facts replace the
        earlier ones in what the :meth:`map` going on returns (one answer
        per worker, after its earlier jobs').  The facts are those of an
        extraction that knew the spans from the start."""
        knowledge = self.context.knowledge
        changed = bool(knowledge.world.changed_spans(named))
        if changed:
            knowledge = dataclasses.replace(knowledge, world=knowledge.world.with_named(named))
            self.context = RunContext(self.context.preset_names, knowledge)
        self.spans_known = True
        if self.pool is None:
            return
        answered = changed and self._sent_before_spans
        try:
            for worker in self.pool:
                worker.conn.send(("spans", (named, answered)))
                if answered:
                    worker.in_flight.append(None)  # its answer: the facts extracted again
        except OSError:  # a worker is gone: the map going on finds it out and parses here
            pass

    def map(self, jobs, bar=None) -> list:
        """Facts of every :class:`ParseJob`, in order; ``bar`` (a ProgressBar)
        advances per file.  ``jobs`` may be a generator: jobs go to the
        workers in small batches as they come, so the workers parse while
        the caller is still choosing the files (the prefilter); it may call
        :meth:`learn_spans` as it goes."""
        if self.pool is None:
            return self._parse_here(jobs, bar)
        self._take_every_answer()  # a batch's answer is next on every pipe
        jobs = iter(jobs)
        submitted: list = []
        out: list = []
        at: dict = {}  # resolved path -> its position among the ordinary jobs
        free: deque = deque()  # tasks (positions in ``submitted``) for any worker, not sent yet
        batch: list = []
        batch_bytes = 0
        pinned: dict = {}  # worker index -> (positions, bytes) of the patches gathered for it
        try:
            for job in jobs:
                position = len(submitted)
                submitted.append(job)
                out.append(None)
                if job.raising is None:
                    at[job.path] = position
                if bar is not None:
                    bar.expect()
                # a deeper look at a file (a patch, or a whole extraction again) goes where its tree is kept
                holder = self._holder.get(job.path) if job.raising is None else None
                if holder is not None:
                    positions, size = pinned.get(holder, ([], 0))
                    positions.append(position)
                    size += len(job.data)
                    if len(positions) == BATCH or size >= BATCH_BYTES:
                        self.pool[holder].pinned.append(positions)
                        positions, size = [], 0
                    pinned[holder] = (positions, size)
                else:
                    batch.append(position)
                    batch_bytes += len(job.data)
                    if len(batch) == BATCH or batch_bytes >= BATCH_BYTES:
                        free.append(batch)
                        batch, batch_bytes = [], 0
                self._send(free, submitted)
                self._receive(out, bar, 0, at)
            for holder, (positions, _size) in pinned.items():
                if positions:
                    self.pool[holder].pinned.append(positions)
            if batch:
                free.append(batch)
            free = self._even_out(free, submitted)
            while True:
                self._send(free, submitted)
                if not any(worker.in_flight for worker in self.pool):
                    return out
                with timeline.span("wait for the round's last tasks"):
                    self._receive(out, bar, None, at)
        except (OSError, RuntimeError):  # a worker broke: finish here
            self.close()
            if bar is not None:
                bar.start(bar.label, 0)
            rest = list(jobs)  # (the spans are known once the caller has chosen every file)
            return self._parse_here(submitted + rest, bar)

    def _send(self, free: deque, submitted: list) -> None:
        """Hand tasks to the workers with fewer than IN_FLIGHT in hand: a
        worker's own patches first, then the next task for any worker."""
        for worker in self.pool:
            while len(worker.in_flight) < IN_FLIGHT:
                if worker.pinned:
                    positions = worker.pinned.popleft()
                elif free:
                    positions = free.popleft()
                else:
                    break
                batch = [submitted[i] for i in positions]
                for job in batch:
                    if job.raising is None:
                        self._holder[job.path] = worker.index
                    if job.lazy:
                        self._deferring[job.path] = (worker.index, job)
                worker.conn.send(("batch", batch))
                worker.in_flight.append(positions)
                self._sent_before_spans |= not self.spans_known

    def _receive(self, out: list, bar, timeout: Optional[float], at: dict) -> None:
        """Put the facts of the tasks answered so far in ``out`` (``at``:
        resolved path -> position there, for the facts extracted again once
        the spans were learnt); with ``timeout`` None, wait for one answer at least."""
        busy = {worker.conn: worker for worker in self.pool if worker.in_flight}
        for conn in wait_for(list(busy), timeout):
            worker = busy[conn]
            try:
                done, value = conn.recv()
            except EOFError:
                raise _BrokenWorker(f"worker {worker.index} ended") from None
            positions = worker.in_flight.popleft()
            if not done:
                raise value
            if positions is None:  # the files extracted again with the spans learnt
                for facts in value:
                    out[at[facts.path]] = facts
                continue
            for position, facts in zip(positions, value):
                out[position] = facts
                if bar is not None:
                    bar.advance()

    def _even_out(self, free: deque, submitted: list) -> deque:
        """The tasks of a round no worker has been sent when the round's
        last file is chosen, one file per task, largest first: the round
        waits for its last task, and a batch of files, or a large file, left
        for last keeps one worker busy while the others have nothing to do
        (the next round needs every fact of this one)."""
        left = sorted((i for positions in free for i in positions), key=lambda i: (-len(submitted[i].data), i))
        return deque([i] for i in left)

    def _parse_here(self, jobs, bar) -> list:
        if not self.spans_known:
            # nothing is extracted here before the spans are: the caller
            # chooses every file first (and learns them as it goes)
            jobs = list(jobs)
        out = []
        for job in jobs:
            if bar is not None:
                bar.expect()
            out.append(extract(job, self.context, self._trees, self._deferred))
            if bar is not None:
                bar.advance()
        return out

    def _fill_here(self, stubs: list) -> None:
        """Pending summaries extracted here, or by a worker that is gone
        (their files extracted again here as their jobs asked: the same
        functions deep, so the same positions pending), summarised here."""
        for stub in stubs:
            if stub.path not in self._deferred:
                extract(self._deferring[stub.path][1], self.context, None, self._deferred)
            stub.settle(fill_variants(self._deferred, stub.path, stub.position))

    def keep_trees(self, paths) -> None:
        """Keep the syntax trees of the files at ``paths`` (resolved) only:
        those a re-analysis patch comes for next.  A file's tree is kept by
        the process that parsed it (the run's own, or the worker the file
        went to) until then, and the patch goes to that process and runs
        on the tree instead of parsing the same bytes again (a patch of a
        tree not kept parses them: the same facts, in more time)."""
        wanted = set(paths)
        for path in [path for path in self._trees if path not in wanted]:
            del self._trees[path]
        if self.pool is None:
            return
        held: list = [[] for _ in self.pool]
        for path, index in list(self._holder.items()):
            if path in wanted:
                held[index].append(path)
            else:
                del self._holder[path]
        try:
            for worker in self.pool:
                worker.conn.send(("keep", frozenset(held[worker.index])))
        except OSError:  # a worker is gone: the next map finds it out and parses here
            pass

    def close(self) -> None:
        """Stop the workers (the pending summaries they held are extracted
        here again if read: :meth:`_fill_here`)."""
        self._trees = dropped(self._trees)
        self._holder = {}
        if self.pool is not None:
            pool, self.pool = self.pool, None
            for worker in pool:
                if worker.in_flight or self._fills_asked.get(worker.index):
                    # stopped in the middle (Ctrl-C, an error): no answer is awaited
                    worker.process.terminate()
                worker.conn.close()  # the worker's reader ends: it stops after its task in hand
            for worker in pool:
                worker.process.join()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
        self._deferred = dropped(self._deferred)
        self._deferring = {}
