"""Parsing and fact extraction, in worker processes.

A run forks its pool of workers once, before it reads any file (each worker
starts small and holds only what it parses), and hands them the run's
:class:`RunContext` through the pool's initializer.  Each :class:`ParseJob`
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
import gc
import signal
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Optional

from ..config import Settings
from ..decoding import SourceDecodeError, decode_source
from ..presets import Knowledge, load_presets
from ..analysis.facts import extract_file_facts
from ..analysis.records import FileFacts
from .cache import store_pickle

PARALLEL_THRESHOLD = 64  # fewer files than this are parsed in-process

# A task is a few files: one file per task costs a round trip each, one
# large task at the end of a round keeps one worker busy while the others
# wait for the next round.
BATCH = 8  # files per task sent to a worker, at most
BATCH_BYTES = 48 << 10  # and at most about this much source

# Cycles of what extraction allocates are collected in a worker after every
# this much source (a safety net: extraction leaves no syntax tree or
# self-calling closure in a cycle, tests/test_memory_bounds.py; on vLLM a
# whole run leaves about 8 k objects to the collector).  The run's own process
# parsing in-process does not collect: a collection of its youngest
# generation walks every object made since the one before, the facts it
# keeps included, 1.3 s of a 24 s jobs=1 run of vLLM for those 8 k objects.
COLLECT_EVERY_BYTES = 1 << 20


@dataclass(frozen=True)
class RunContext:
    """What every job of a run shares: the presets, by name and loaded.
    A worker forked from the run inherits it; one started afresh (where
    processes are spawned) loads the presets again by name."""

    preset_names: tuple
    knowledge: Knowledge

    @classmethod
    def of(cls, preset_names) -> "RunContext":
        return cls(tuple(preset_names), load_presets(list(preset_names)))

    def __reduce__(self):
        return (RunContext.of, (self.preset_names,))


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


def extract(job: ParseJob, context: RunContext, trees: Optional[dict] = None) -> FileFacts:
    """The facts of one job (and their cache entry, when the job names one).
    ``trees``: resolved path -> (bytes, syntax tree) of the files parsed
    before, read and added to (see :meth:`Workers.keep_trees`)."""
    facts = _extract(job, context, trees)
    if job.store:
        store_pickle(job.store, facts)
    return facts


def _extract(job: ParseJob, context: RunContext, trees: Optional[dict] = None) -> FileFacts:
    path, data, module = job.path, job.data, job.module
    kept = trees.get(path) if trees is not None else None
    try:
        if kept is not None and (kept[0] is data or kept[0] == data):
            # A re-analysis patch on the tree of the file's first extraction:
            # extraction reads a tree and never changes it (the patch starts
            # from a fresh ModuleContext, as on a fresh parse).
            tree = kept[1]
        else:
            tree = ast.parse(data, filename=path)
            if trees is not None and job.raising is None:
                trees[path] = (data, tree)
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
    try:
        return extract_file_facts(path, data, job.settings, context.knowledge, tree=tree, module=module,
                                  deep_names=job.deep_names, already_deep=job.already_deep,
                                  raising=job.raising)
    except RecursionError:
        facts = FileFacts(path=path, module=module)
        facts.error = "source too deeply nested to analyse"
        return facts


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
    """A worker's own state: the run's context from the pool initializer,
    and the source parsed since its last collection of cycles."""

    def __init__(self, context: RunContext):
        self.context = context
        self.since_collect = 0

    def parse_batch(self, jobs: list) -> list:
        out = []
        for job in jobs:
            out.append(extract(job, self.context))
            self.since_collect += len(job.data)
            if self.since_collect >= COLLECT_EVERY_BYTES:
                self.since_collect = 0
                gc.collect()  # walks only the worker's own objects: what it inherited is frozen
        return out


#: In a worker process, its state (set by the pool initializer); None in the
#: run's own process, which never reads it.
_PROCESS: Optional[_WorkerProcess] = None


def _worker_start(context: RunContext) -> None:
    """The pool initializer.  Worker processes run with the cyclic collector
    off, like the parent; what extraction leaves in cycles is collected
    every few megabytes of source instead (the inherited objects are frozen
    first, so a collection walks only the worker's own objects).  Without it
    a long-lived worker kept every file's garbage until the end of the run.

    Ctrl-C reaches every process of the terminal's group: the parent alone
    handles it (and stops the pool), so a worker ignores it instead of
    printing a traceback; SIGTERM ends a worker plainly, whatever handler
    the parent had when it forked."""
    global _PROCESS
    _PROCESS = _WorkerProcess(context)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if _CAN_BLOCK:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)  # blocked by the parent while it forked
    gc.freeze()


def _parse_batch(jobs: list) -> list:
    """A task of a worker process."""
    return _PROCESS.parse_batch(jobs)


def _ready() -> bool:
    return True


#: Held back while the workers start: a worker forked with the parent's
#: handlers would otherwise raise in the middle of its start-up.
_STOP_SIGNALS = frozenset((signal.SIGINT, signal.SIGTERM))
_CAN_BLOCK = hasattr(signal, "pthread_sigmask")


class Workers:
    """The worker processes of one run, started once, before the run reads
    any file: forked from a small parent, each worker holds only what it
    parses (a pool started per round was forked from a parent holding every
    file's bytes and facts, and paid the start-up each round)."""

    def __init__(self, jobs: int, files: int, context: RunContext):
        self.jobs = jobs
        self.context = context
        self.pool = None
        #: resolved path -> (bytes, syntax tree) of the files parsed in-process
        #: that a re-analysis patch may parse again (see keep_trees)
        self._trees: dict = {}
        if jobs <= 1 or files < PARALLEL_THRESHOLD:
            return
        if _CAN_BLOCK:
            previous_mask = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
        try:
            try:
                import multiprocessing

                mp_context = multiprocessing.get_context("fork") if sys.platform.startswith("linux") else None
                self.pool = ProcessPoolExecutor(max_workers=jobs, mp_context=mp_context, initializer=_worker_start,
                                                initargs=(context,))
                # processes start on submission: start them all now, while small
                for future in [self.pool.submit(_ready) for _ in range(jobs)]:
                    future.result()
            finally:
                if _CAN_BLOCK:  # a signal that came meanwhile is delivered here, to the parent
                    signal.pthread_sigmask(signal.SIG_SETMASK, previous_mask)
        except (OSError, RuntimeError):  # no processes available: work here
            self.close()
        except BaseException:  # Ctrl-C while starting: no `with` block will stop the workers
            self.close()
            raise

    def map(self, jobs, bar=None) -> list:
        """Facts of every :class:`ParseJob`, in order; ``bar`` (a ProgressBar)
        advances per file.  ``jobs`` may be a generator: jobs go to the
        workers in small batches as they come, so the workers parse while
        the caller is still choosing the files (the prefilter)."""
        if self.pool is None:
            return self._parse_here(jobs, bar)
        jobs = iter(jobs)
        submitted, batch = [], []
        tasks = []  # (future, the positions in ``submitted`` of its jobs)
        batch_bytes = 0
        try:
            for job in jobs:
                batch.append(len(submitted))
                submitted.append(job)
                batch_bytes += len(job.data)
                if bar is not None:
                    bar.expect()
                if len(batch) == BATCH or batch_bytes >= BATCH_BYTES:
                    tasks.append((self.pool.submit(_parse_batch, [submitted[i] for i in batch]), batch))
                    batch, batch_bytes = [], 0
            if batch:
                tasks.append((self.pool.submit(_parse_batch, [submitted[i] for i in batch]), batch))
            tasks = self._even_out(tasks, submitted)
            out = [None] * len(submitted)
            for future, positions in tasks:
                for position, facts in zip(positions, future.result()):
                    out[position] = facts
                    if bar is not None:
                        bar.advance()
            return out
        except (OSError, RuntimeError):  # the pool broke (BrokenProcessPool): finish here
            self.close()
            if bar is not None:
                bar.start(bar.label, 0)
            return self._parse_here(submitted, bar) + self._parse_here(jobs, bar)

    def _even_out(self, tasks: list, submitted: list) -> list:
        """The tasks of a round, with those no worker has started yet handed
        out again one file per task, largest first: the round waits for its
        last task, and a batch of files, or a large file, left for last keeps
        one worker busy while the others have nothing to do (the next round
        needs every fact of this one)."""
        waiting = [positions for future, positions in tasks if future.cancel()]
        if not waiting:
            return tasks
        kept = [(future, positions) for future, positions in tasks if not future.cancelled()]
        left = sorted((i for positions in waiting for i in positions), key=lambda i: (-len(submitted[i].data), i))
        return kept + [(self.pool.submit(_parse_batch, [submitted[i]]), [i]) for i in left]

    def _parse_here(self, jobs, bar) -> list:
        out = []
        for job in jobs:
            if bar is not None:
                bar.expect()
            out.append(extract(job, self.context, self._trees))
            if bar is not None:
                bar.advance()
        return out

    def keep_trees(self, paths) -> None:
        """Keep the syntax trees of the files at ``paths`` (resolved) only:
        those a re-analysis patch comes for next.  A file parsed in this
        process has its tree kept until then, and the patch runs on it
        instead of parsing the same bytes again (a patch of a tree not kept
        parses them: the same facts, in more time).  Trees are kept by the
        run's own process only: a patch goes to whichever worker is free,
        1 time in ``jobs`` the one holding the tree."""
        wanted = set(paths)
        for path in [path for path in self._trees if path not in wanted]:
            del self._trees[path]

    def close(self) -> None:
        self._trees = {}
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
