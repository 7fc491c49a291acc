"""Pending summaries worked out ahead by a child of each worker at the idle
scheduling class (cslint/engine/ahead.py): what the run's process gets for
a summary is the same as when the worker works it out as asked."""

from __future__ import annotations

import os
import pickle
import textwrap
import types

import pytest

from cslint.api import check_paths
from cslint.config import Settings
from cslint.engine import ahead as ahead_module
from cslint.engine import workers as workers_module
from cslint.engine.workers import PARALLEL_THRESHOLD, ParseJob, RunContext, _WorkerProcess

pytestmark = pytest.mark.skipif(not ahead_module.CAN_IDLE, reason="no fork or idle scheduling class here")

SOURCE = textwrap.dedent("""
    import torch.distributed as dist

    def describe(x):
        return "rank %d" % x

    def scaled(x):
        return x * 2

    def sync(t):
        if scaled(dist.get_rank()) == 0:
            dist.all_reduce(t)
""").encode()


def _worker() -> tuple:
    """A worker's state with one file extracted lazily, and its pending summaries' keys by name."""
    worker = _WorkerProcess(RunContext.of(["torch_distributed"]))
    facts = worker.parse_batch([ParseJob("m.py", SOURCE, Settings(), "m", frozenset(), lazy=True)])[0]
    return worker, {facts.functions[position].qualname: ("m.py", position) for position in worker.deferred["m.py"]}


def _until_the_child_ends(ahead) -> None:
    ahead.drain.join()
    ahead.receive()


def _start(worker) -> None:
    read_end, write_end = os.pipe()  # stands for the pipe to the run's process, which the child closes
    worker.work_ahead(types.SimpleNamespace(fileno=lambda: write_end))
    os.close(read_end)
    os.close(write_end)


def test_the_child_works_out_first_what_deep_functions_call_and_the_worker_answers_with_it():
    worker, pending = _worker()
    assert set(pending) == {"describe", "scaled"}
    # ``scaled`` comes later in the file, but the deep ``sync`` calls it
    assert list(worker.ahead.first) == [pending["scaled"]]
    _start(worker)
    assert worker.ahead.child is not None
    _until_the_child_ends(worker.ahead)
    assert worker.ahead.child is None and set(worker.ahead.ready) == set(pending.values())
    wanted = [pending["describe"], pending["scaled"]]
    answered = worker.fill(wanted)
    assert all(type(sent) is bytes for sent in answered)
    plain, _ = _worker()
    assert [pickle.dumps(pickle.loads(sent)) for sent in answered] == [pickle.dumps(f) for f in plain.fill(wanted)]
    assert not worker.ahead.ready  # each handed over once


def test_a_summary_asked_for_before_the_child_sends_it_is_worked_out_by_the_worker():
    worker, pending = _worker()
    first = worker.fill([pending["scaled"]])[0]
    assert type(first) is not bytes
    _start(worker)
    _until_the_child_ends(worker.ahead)
    # the child was forked after ``scaled`` was handed over: it did ``describe`` alone
    assert set(worker.ahead.ready) == {pending["describe"]}
    worker.ahead.stop()  # no child left: nothing to do
    assert type(worker.fill([pending["describe"]])[0]) is bytes


def test_stopping_the_child_keeps_what_it_sent():
    worker, pending = _worker()
    _start(worker)
    child = worker.ahead.child
    worker.ahead.stop()
    assert worker.ahead.child is None and worker.ahead.drain is None
    with pytest.raises(ChildProcessError):
        os.waitpid(child, 0)  # reaped
    answered = worker.fill(list(pending.values()))
    plain, _ = _worker()
    expected = [pickle.dumps(f) for f in plain.fill(list(pending.values()))]
    assert [pickle.dumps(pickle.loads(a) if type(a) is bytes else a) for a in answered] == expected


SYNC = textwrap.dedent("""
    import torch.distributed as dist

    def sync(t, flag):
        if flag:
            dist.all_reduce(t)
""")

# ``relay_N`` hands its argument to ``sync``'s condition: the demand reads
# what it passes, so the pass asks for its summary (pending: it writes no field)
RELAY = textwrap.dedent("""
    import torch.distributed as dist
    import m0

    def relay_{index}(t, flag):
        m0.sync(t, flag)

    def own_{index}(t):
        if dist.get_rank() == {index}:
            dist.barrier()
""")


def test_a_run_whose_summaries_all_come_from_the_children_finds_what_a_run_in_one_process_finds(tmp_path,
                                                                                                monkeypatch):
    (tmp_path / "m0.py").write_text(SYNC)
    for index in range(1, PARALLEL_THRESHOLD + 4):
        (tmp_path / f"m{index}.py").write_text(RELAY.format(index=index))
    one = check_paths([str(tmp_path)], cache=False, jobs=1)
    # every request, and the end of working ahead, waits for the worker's
    # child to end (the workers are forked from this process, patched):
    # each summary comes from a child
    monkeypatch.setattr(ahead_module.SummariesAhead, "receive", _until_the_child_ends_or_none)
    monkeypatch.setattr(ahead_module.SummariesAhead, "stop", _until_the_child_ends_or_none)
    unpickled = []
    loads = pickle.loads
    monkeypatch.setattr(workers_module, "pickle", types.SimpleNamespace(
        loads=lambda data: unpickled.append(data) or loads(data), PicklingError=pickle.PicklingError))
    two = check_paths([str(tmp_path)], cache=False, jobs=2)
    assert [f.to_json() for f in two.findings] == [f.to_json() for f in one.findings]
    assert len(one.findings) == PARALLEL_THRESHOLD + 3
    assert len(unpickled) == PARALLEL_THRESHOLD + 3  # each ``relay_N``


RECEIVE = ahead_module.SummariesAhead.receive


def _until_the_child_ends_or_none(ahead) -> None:
    if ahead.drain is not None:
        ahead.drain.join()
    RECEIVE(ahead)
