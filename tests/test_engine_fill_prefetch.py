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
