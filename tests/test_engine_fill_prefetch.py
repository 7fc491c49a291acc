"""Pending summaries asked of the workers ahead (issue 12: the whole-tree
pass waited on each wave of fills with one core idle): the demand asks the
workers for a pending summary as soon as it meets one it will fill
(``records.prefetch_pending``, :meth:`Workers.prefetch`), and the fill at the
end of the wave waits only for what is not back yet.  Nothing is settled
before that fill, and what it settles is what a fill asked for then gives."""

import sys

import pytest

from cslint.analysis.facts import extract_file_facts
from cslint.analysis.program import Program
from cslint.analysis.records import fill_pending, is_pending, prefetch_pending
from cslint.config import Settings
from cslint.engine.fills import PREFETCH_BATCH
from cslint.engine.workers import PARALLEL_THRESHOLD, ParseJob, RunContext, Workers
from cslint.presets import load_presets

from test_pending_summaries import MODULE, _Filler

KNOWLEDGE = load_presets(["torch_distributed"])


def _source(index: int) -> bytes:
    # one function reaching a collective (extracted at once) and helpers that
    # write no field: left pending by a lazy job
    helpers = "".join(f"def helper_{index}_{k}(x):\n    return x * {k} + {index}\n\n" for k in range(3))
    return (f"import torch.distributed as dist\n\n{helpers}"
            f"def sync_{index}(t):\n    dist.all_reduce(t)\n").encode()


def _jobs() -> list:
    return [ParseJob(f"/pkg/m{i}.py", _source(i), Settings(), f"pkg.m{i}", frozenset(), lazy=True)
            for i in range(PARALLEL_THRESHOLD)]


def _pending(facts_list) -> list:
    stubs = [fn for facts in facts_list for fn in facts.functions if is_pending(fn)]
    assert len(stubs) == 3 * PARALLEL_THRESHOLD
    return stubs


def _settled(pool, prefetch: bool) -> tuple:
    facts_list = pool.map(iter(_jobs()))
    stubs = _pending(facts_list)
    for stub in stubs:
        stub.filler = pool
    asked: list = []
    ask = pool._ask

    def counting(index, wanted, urgent=False):
        if not urgent:  # (the prefetches: a fill's urgent request asks what it waits on again)
            asked.append(len(wanted))
        return ask(index, wanted, urgent)

    pool._ask = counting
    if prefetch:
        prefetch_pending(stubs)
        # each worker's full batches went out at once, the rest goes with the fill; nothing is settled yet
        assert asked and set(asked) == {PREFETCH_BATCH}
        assert sum(asked) + sum(len(held) for held in pool._prefetches.values()) == len(stubs)
        assert all(is_pending(stub) for stub in stubs)
    sent_ahead = sum(asked)
    fill_pending(stubs[::2])  # some of them, their workers' answers taken in order
    assert all(not is_pending(stub) for stub in stubs[::2])
    assert all(is_pending(stub) for stub in stubs[1::2])
    # a batch of files after the fills: its answers are not mistaken for fills
    again = pool.map(iter(_jobs()[:PREFETCH_BATCH]))
    assert [facts.path for facts in again] == [job.path for job in _jobs()[:PREFETCH_BATCH]]
    fill_pending(stubs[1::2])
    assert not any(is_pending(stub) for stub in stubs)
    return [(stub.key, stub) for stub in stubs], sent_ahead


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forked on Linux")
def test_summaries_asked_ahead_settle_as_those_asked_at_the_fill():
    context = RunContext.of(["torch_distributed"])
    with Workers(2, PARALLEL_THRESHOLD, context) as pool:
        assert pool.pool is not None
        ahead, sent_ahead = _settled(pool, prefetch=True)
    with Workers(2, PARALLEL_THRESHOLD, context) as pool:
        at_fill, sent_before = _settled(pool, prefetch=False)
    with Workers(1, PARALLEL_THRESHOLD, context) as here:
        in_process, _sent = _settled(here, prefetch=False)
    assert sent_ahead >= PREFETCH_BATCH and sent_before == 0
    assert ahead == at_fill == in_process


class _AheadFiller(_Filler):
    """A filler that notes what it is asked ahead and what it settles, in order."""

    def __init__(self, deferred: dict):
        super().__init__(deferred)
        self.calls: list = []

    def prefetch(self, stubs) -> None:
        self.calls.append(("ahead", [stub.qualname for stub in stubs]))

    def fill(self, stubs) -> None:
        self.calls.append(("fill", [stub.qualname for stub in stubs if is_pending(stub)]))
        super().fill(stubs)


def test_the_demand_asks_ahead_for_each_pending_summary_it_will_fill():
    deferred: dict = {}
    facts = extract_file_facts("pkg/work.py", MODULE.encode(), Settings(), KNOWLEDGE, module="pkg.work",
                               deferred=deferred)
    filler = _AheadFiller(deferred)
    for fn in facts.functions:
        if is_pending(fn):
            fn.filler = filler
    program = Program([facts], KNOWLEDGE)
    program.solve()
    # the condition reads what scale returns: asked ahead, then filled; the
    # summaries nobody reads are neither
    assert filler.calls == [("ahead", ["scale"]), ("fill", ["scale"])]
    assert [fn.qualname for fn in facts.functions if is_pending(fn)] == ["label_of", "unused_helper"]


def test_an_urgent_request_overtakes_the_prefetches_queued_ahead_of_it():
    """A fill the run's process waits on goes before the prefetches a worker
    has queued (it might want those later, or never), and takes the
    summaries it asks out of them, so none is worked out twice; it never
    overtakes a batch of files, whose answers come in order."""
    from collections import deque

    from cslint.engine.fills import FILL, URGENT_FILL, next_task

    ahead = (FILL, (1, [("a.py", 0), ("a.py", 1)]))
    later = (FILL, (2, [("b.py", 0), ("b.py", 1)]))
    urgent = (URGENT_FILL, (3, [("b.py", 1)]))
    queued = deque([ahead, later, urgent])
    assert next_task(queued) is urgent
    assert list(queued) == [ahead, later]
    assert later[1][1] == [("b.py", 0), None]  # answered once, by the urgent request
    assert next_task(queued) is ahead and next_task(queued) is later
    batch = ("parse", ["job"])
    queued = deque([ahead, batch, (URGENT_FILL, (4, [("a.py", 1)]))])
    assert next_task(queued) is ahead and next_task(queued) is batch
    assert [message[0] for message in queued] == [URGENT_FILL]
    assert next_task(deque([None, urgent])) is None  # the end is served in order too


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forked on Linux")
def test_summaries_settled_as_they_come_back_are_those_filled_at_once():
    """``settle_ready`` settles what the workers sent back (one at least) and
    leaves the rest pending: called until none is, it settles every stub
    as a fill does; a fill of the last stub asked ahead, urgent, is answered
    whatever the worker had queued before it."""
    from cslint.analysis.records import settle_ready_pending

    context = RunContext.of(["torch_distributed"])
    with Workers(2, PARALLEL_THRESHOLD, context) as pool:
        stubs = _pending(pool.map(iter(_jobs())))
        for stub in stubs:
            stub.filler = pool
        prefetch_pending(stubs)
        fill_pending(stubs[-1:])
        assert not is_pending(stubs[-1]) and is_pending(stubs[0])
        calls = 0
        while any(is_pending(stub) for stub in stubs):
            left = sum(is_pending(stub) for stub in stubs)
            settle_ready_pending(stubs + stubs[::3])  # (a stub listed twice is settled once)
            calls += 1
            assert sum(is_pending(stub) for stub in stubs) < left
        assert calls >= 1
        as_they_came = [(stub.key, stub) for stub in stubs]
    with Workers(1, PARALLEL_THRESHOLD, context) as here:
        stubs = _pending(here.map(iter(_jobs())))
        for stub in stubs:
            stub.filler = here
        fill_pending(stubs)
        at_once = [(stub.key, stub) for stub in stubs]
    assert as_they_came == at_once


CHAIN = """\
import torch.distributed as dist

def inner(x):
    return x + 1

def middle(x):
    return inner(x) * 2

def outer(x):
    return middle(x) - 3

def side(x):
    return x

def unused(x):
    return x - 1

class Worker:
    def sync(self, t):
        if outer(dist.get_rank()) == 0:
            dist.all_reduce(t)
        if side(dist.get_rank()):
            dist.barrier()
"""


class _OneAtATime(_AheadFiller):
    """A filler whose answers come back one at a time: ``settle_ready`` settles one pending stub alone (the first
    by name)."""

    def settle_ready(self, stubs) -> None:
        waiting = sorted((stub for stub in stubs if is_pending(stub)), key=lambda stub: stub.qualname)
        self.calls.append(("ready", [stub.qualname for stub in waiting]))
        _Filler.fill(self, waiting[:1])


def _chain_demand(filler_class):
    deferred: dict = {}
    facts = extract_file_facts("pkg/chain.py", CHAIN.encode(), Settings(), KNOWLEDGE, module="pkg.chain",
                               deferred=deferred)
    filler = filler_class(deferred)
    for fn in facts.functions:
        if is_pending(fn):
            fn.filler = filler
    program = Program([facts], KNOWLEDGE)
    program.solve()
    from cslint.analysis.hazards import find_hazards
    from cslint.analysis.uniformity import UniformityInfo
    found = [repr(h) for h in find_hazards(UniformityInfo(program))]
    return [fn.qualname for fn in program.demanded], dict(program.step_reads), found, filler, facts


def test_the_demand_follows_each_summary_as_it_comes_back():
    """The demand does not wait for a whole wave of pending summaries: it
    follows what each one that came back reads while the others are worked
    out (``settle_ready``), and wants the same functions, with the same
    reads and findings, as when every wave is filled at once."""
    demanded, reads, found, filler, facts = _chain_demand(_OneAtATime)
    at_once = _chain_demand(_AheadFiller)
    assert (demanded, reads, found) == at_once[:3]
    assert found and demanded == ["inner", "middle", "outer", "side", "Worker.sync"]
    # outer and side met together, back one at a time: outer's callee is asked for while side is still out
    assert [call for call in filler.calls if call[0] == "ready"][:2] == [("ready", ["outer", "side"]),
                                                                         ("ready", ["middle", "side"])]
    assert ("ahead", ["middle"]) in filler.calls[:filler.calls.index(("ready", ["middle", "side"]))]
    assert [fn.qualname for fn in facts.functions if is_pending(fn)] == ["unused"]


def test_the_pending_results_the_deep_functions_read_are_asked_before_the_writes_are_indexed(monkeypatch):
    """A function's results are written by its own step alone: a pending
    summary whose results the functions analysed in depth read is filled
    whatever else is read, so the demand asks for it before it indexes what
    every summary writes (the workers work meanwhile), and wants what it
    wanted before."""
    from cslint.analysis import demand

    filler_of: list = []
    writes = demand.table_writes

    def noting(program, fn):
        if filler_of and not any(call == ("index", []) for call in filler_of[0].calls):
            filler_of[0].calls.append(("index", []))
        return writes(program, fn)

    class _Noted(_OneAtATime):
        def __init__(self, deferred):
            super().__init__(deferred)
            filler_of.append(self)

    monkeypatch.setattr(demand, "table_writes", noting)
    demanded, reads, found, filler, _facts = _chain_demand(_Noted)
    # (asked ahead twice: as the program is built, and by the demand; the workers ask each once)
    before_index = filler.calls[:filler.calls.index(("index", []))]
    assert before_index and all(asked == "ahead" and sorted(ahead) == ["outer", "side"]
                                for asked, ahead in before_index)
    monkeypatch.setattr(demand, "table_writes", writes)
    assert (demanded, reads, found) == _chain_demand(_AheadFiller)[:3]


def test_the_summaries_the_deep_functions_call_are_asked_for_as_the_program_is_built():
    """The workers sit idle while the program is built: the pending
    summaries the calls of the functions analysed in depth may run, which
    the demand asks for first whatever else it finds, are asked for as soon
    as the resolver stands (``demand.ask_ahead``), and only asked: none is
    settled before the demand settles it, and the demand wants what it
    wanted, with the same reads and findings."""
    deferred: dict = {}
    facts = extract_file_facts("pkg/chain.py", CHAIN.encode(), Settings(), KNOWLEDGE, module="pkg.chain",
                               deferred=deferred)
    filler = _AheadFiller(deferred)
    for fn in facts.functions:
        if is_pending(fn):
            fn.filler = filler
    Program([facts], KNOWLEDGE)
    # Worker.sync calls outer and side; what they call, and unused, are left to the demand
    assert [(asked, sorted(names)) for asked, names in filler.calls] == [("ahead", ["outer", "side"])]
    assert sorted(fn.qualname for fn in facts.functions if is_pending(fn)) == ["inner", "middle", "outer", "side",
                                                                                "unused"]
    demanded, reads, found, _filler, _facts = _chain_demand(_AheadFiller)
    assert found and demanded == ["inner", "middle", "outer", "side", "Worker.sync"]


def test_an_urgent_request_overtakes_the_prefetch_a_worker_is_working_out(monkeypatch):
    """An urgent request that comes while a worker works out a prefetch batch
    waits for one summary, not for the batch: it is answered between two
    summaries, its answer sent first, and what it asks is struck from the
    rest of the batch (None there: answered once).  A prefetch that comes
    meanwhile waits its turn, as does an urgent request behind a batch of
    files."""
    import queue
    from collections import deque

    from cslint.engine import workers
    from cslint.engine.fills import FILL, URGENT_FILL

    worked: list = []
    inbox: queue.SimpleQueue = queue.SimpleQueue()
    arriving = {("a.py", 0): [(FILL, (2, [("c.py", 0)])), (URGENT_FILL, (3, [("a.py", 2), ("b.py", 0)]))],
                ("a.py", 1): [("parse", ["job"]), (URGENT_FILL, (4, [("a.py", 3)]))]}

    def working(deferred, path, position):
        worked.append((path, position))
        for message in arriving.pop((path, position), ()):
            inbox.put(message)
        return f"{path}:{position}"

    monkeypatch.setattr(workers, "fill_variants", working)
    monkeypatch.setattr(workers, "_PROCESS", workers._WorkerProcess(None))
    queued, outbox = deque(), queue.SimpleQueue()
    keys = [("a.py", 0), ("a.py", 1), ("a.py", 2), ("a.py", 3)]
    answers = workers._prefetch_overtaken(keys, inbox, queued, outbox)
    # the urgent request went right after the summary in progress; the one behind the batch of files waits
    assert worked == [("a.py", 0), ("a.py", 2), ("b.py", 0), ("a.py", 1), ("a.py", 3)]
    assert outbox.get_nowait() == (True, (3, ["a.py:2", "b.py:0"])) and outbox.empty()
    assert answers == ["a.py:0", "a.py:1", None, "a.py:3"]
    assert [message[0] for message in queued] == [FILL, "parse", URGENT_FILL]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are forked on Linux")
@pytest.mark.parametrize("as_they_come", [False, True])
def test_the_summaries_of_a_worker_that_is_gone_are_worked_out_here_once(as_they_come):
    """A worker gone after it was asked ahead: ``settle_ready`` and ``fill``
    settle its stubs alike (the answers it sent before it went, the rest
    worked out here, each stub once, a stub listed twice too), and the
    summaries are those filled at once in one process."""
    from cslint.analysis.records import settle_ready_pending

    context = RunContext.of(["torch_distributed"])
    with Workers(2, PARALLEL_THRESHOLD, context) as pool:
        stubs = _pending(pool.map(iter(_jobs())))
        for stub in stubs:
            stub.filler = pool
        prefetch_pending(stubs)
        gone = pool._deferring[stubs[0].path][0]
        pool.pool[gone].process.kill()
        pool.pool[gone].process.join()
        filled_here: list = []
        fill_here = pool._fill_here
        pool._fill_here = lambda batch: filled_here.extend(batch) or fill_here(batch)
        while any(is_pending(stub) for stub in stubs):
            (settle_ready_pending if as_they_come else fill_pending)(stubs + stubs[::3])
        assert len({id(stub) for stub in filled_here}) == len(filled_here)
        assert all(pool._deferring[stub.path][0] == gone for stub in filled_here)
        settled = [(stub.key, stub) for stub in stubs]
    with Workers(1, PARALLEL_THRESHOLD, context) as here:
        stubs = _pending(here.map(iter(_jobs())))
        for stub in stubs:
            stub.filler = here
        fill_pending(stubs)
        assert settled == [(stub.key, stub) for stub in stubs]
