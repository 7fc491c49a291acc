"""Unit tests of cslint.runtime: checks, state files, report, timeline, watchdog.

Ranks are threads here, exchanging through an in-process fake communicator,
so these tests need neither MPI nor torch.  The tests that run ranks run with
both ledgers (the C one and the pure-Python reference).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from cslint.runtime import CollectiveDivergence, core, maybe_wrap, wrap
from cslint.runtime.core import Sanitizer
from cslint.runtime.ledger import Ledger, PyLedger
from cslint.runtime.report import diagnose
from cslint.runtime.timeline import render_svg
from cslint.runtime.wrappers import DistributedProxy

ROOT = Path(__file__).resolve().parents[1]
LEDGERS = [PyLedger] + ([Ledger] if Ledger is not PyLedger else [])


@pytest.fixture(params=LEDGERS, ids=[cls.implementation for cls in LEDGERS])
def ledger_impl(request, monkeypatch):
    """Run the test's ranks with each ledger implementation."""
    monkeypatch.setattr(core, "Ledger", request.param)
    return request.param


class FakeGroup:
    """An in-process 'communicator': every call is an exchange among `size` threads."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.slots = [None] * size
        self.barrier = threading.Barrier(size, timeout=5)

    def exchange(self, rank: int, obj):
        self.slots[rank] = obj
        self.barrier.wait()
        out = list(self.slots)
        self.barrier.wait()
        return out


class FakeDist:
    """Distributed-like: tp_allgather, tp_broadcast, tp_allreduce over a FakeGroup."""

    def __init__(self, group: FakeGroup, rank: int) -> None:
        self.group = group
        self.rank = rank
        self.world_size = group.size
        self.tp_size = group.size

    def tp_group_ranks(self):
        return list(range(self.group.size))

    def tp_allgather(self, obj):
        return self.group.exchange(self.rank, obj)

    def tp_broadcast(self, obj, root=0):
        return self.group.exchange(self.rank, obj)[root]

    def tp_allreduce(self, obj, op=None):
        return sum(self.group.exchange(self.rank, obj))


def run_ranks(size: int, body, report_dir=None):
    """Run body(rank, dist) on `size` threads with sanitized FakeDists; returns results or exceptions."""
    group = FakeGroup(size)
    results: list = [None] * size

    def target(rank):
        sanitizer = Sanitizer(rank, size, report_dir=str(report_dir) if report_dir else None, timeout=0,
                              on_error="raise")
        dist = DistributedProxy(FakeDist(group, rank), sanitizer)
        try:
            results[rank] = body(rank, dist)
        except Exception as exc:  # noqa: BLE001 - the test looks at what each rank ended with
            results[rank] = exc
        finally:
            if sanitizer.reported is None:
                sanitizer.close()

    threads = [threading.Thread(target=target, args=(r,)) for r in range(size)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    return results


def _status(dist, local):
    """A shared wrapper, like PyExecutor._allgather_model_parallel_status."""
    return dist.tp_allgather(local)


def _fill_gate(dist, rank):
    return any(_status(dist, rank == 99))


def _fill_complete(dist, rank):
    return sum(_status(dist, rank))


def test_matching_collectives_return_the_bare_results(ledger_impl, tmp_path):
    def body(rank, dist):
        out = []
        for i in range(5):
            out.append(dist.tp_allgather((rank, i)))
        out.append(dist.tp_broadcast(f"from {rank}", root=1))
        out.append(dist.tp_allreduce(rank + 1))
        return out

    results = run_ranks(3, body, tmp_path)
    for rank, result in enumerate(results):
        assert not isinstance(result, Exception), result
        assert result[:5] == [[(r, i) for r in range(3)] for i in range(5)]
        assert result[5] == "from 1"
        assert result[6] == 6
    state = json.loads((tmp_path / "rank2.json").read_text())
    assert state["status"] == "finished"
    assert [e["seq"] for e in state["history"]] == list(range(7))
    assert {e["group"] for e in state["history"]} == {"tp[0,1,2]"}
    assert state["history"][0]["callpath"][0]["function"].endswith("body")


def test_same_wrapper_reached_from_different_callers_is_a_divergence(ledger_impl, tmp_path):
    def body(rank, dist):
        return _fill_complete(dist, rank) if rank == 0 else _fill_gate(dist, rank)

    results = run_ranks(2, body, tmp_path)
    assert all(isinstance(r, CollectiveDivergence) for r in results), results
    assert "_fill_complete" in str(results[0]) and "_fill_gate" in str(results[1])
    diagnosis = diagnose(str(tmp_path), link_findings=False)
    assert diagnosis.kind == "mismatch" and diagnosis.seq == 0
    assert diagnosis.diverging_functions() == {0: "_fill_complete", 1: "_fill_gate"}


def test_broadcast_mismatch_is_caught_by_the_receivers(ledger_impl):
    def body(rank, dist):
        if rank == 0:
            return dist.tp_broadcast("x", root=0)
        return dist.tp_allgather("y")  # pairs with rank 0's broadcast in a real MPI job

    results = run_ranks(2, body)
    assert isinstance(results[1], CollectiveDivergence)


def test_reduction_on_another_path_is_checked_with_an_extra_exchange(ledger_impl):
    def body(rank, dist):
        return dist.tp_allreduce(1) if rank == 0 else dist.tp_allgather(1)

    results = run_ranks(2, body)
    assert all(isinstance(r, CollectiveDivergence) for r in results), results


def _publish_a(dist):
    return dist.tp_broadcast("a", root=0)


def _publish_b(dist):
    return dist.tp_broadcast("b", root=0)


def test_broadcast_root_learns_of_a_divergence_at_the_next_collective(ledger_impl):
    """The root only sends, so it cannot compare in the broadcast; its peers' disagreement reaches it in
    the group's next collective."""

    def body(rank, dist):
        caught = {}
        try:
            (_publish_a if rank == 0 else _publish_b)(dist)  # the root's own call site differs
        except CollectiveDivergence as exc:
            caught["broadcast"] = str(exc)
        try:
            dist.tp_allgather(rank)
        except CollectiveDivergence as exc:
            caught["allgather"] = str(exc)
        return caught

    root, peer = run_ranks(2, body)
    assert set(peer) == {"broadcast", "allgather"} and "_publish_b" in peer["broadcast"]
    assert list(root) == ["allgather"], root
    assert "only sent in tp_broadcast #0" in root["allgather"] and "_publish_a" in root["allgather"]


def test_broadcast_root_is_not_flagged_when_everyone_agrees(ledger_impl):
    def body(rank, dist):
        out = [_publish_a(dist) for _ in range(3)]
        out.append(dist.tp_allgather(rank))
        return out

    assert run_ranks(2, body) == [["a", "a", "a", [0, 1]]] * 2


def _done_a(dist):
    return dist.tp_allreduce(1)


def _done_b(dist):
    return dist.tp_allreduce(1)


def test_reduction_off_the_known_path_is_checked_at_once(ledger_impl):
    """A reduction carries no stamp: a rank that reaches one from a new site exchanges stamps first."""

    def body(rank, dist):
        for i in range(5):
            _done_a(dist)
            dist.tp_allgather(i)
        return (_done_a if rank == 0 else _done_b)(dist)

    results = run_ranks(2, body)
    assert isinstance(results[1], CollectiveDivergence) and "_done_b" in str(results[1])
    # rank 0 stayed on its path and sent its reduction's payload into rank 1's exchange (a real
    # backend would hang there; the fake one fails): rank 1's report takes the job down
    assert isinstance(results[0], Exception)


def test_unsanitized_peer_is_reported_not_crashed(ledger_impl):
    group = FakeGroup(2)
    sanitizer = Sanitizer(0, 2, timeout=0, on_error="raise")
    wrapped = DistributedProxy(FakeDist(group, 0), sanitizer)
    bare = FakeDist(group, 1)

    def rank1():
        bare.tp_allgather("raw")

    t = threading.Thread(target=rank1)
    t.start()
    with pytest.raises(CollectiveDivergence):
        wrapped.tp_allgather("wrapped")
    t.join(5)


def _state(rank, status, history, current=None, limit=64):
    def entry(group, seq, function, line, t):
        return {"index": seq, "op": "tp_allgather", "group": group, "seq": seq, "site": f"x.py:{line}",
                "function": function, "callpath": [{"path": "/nonexistent/x.py", "line": line, "function": function}],
                "digest": hash((function, line)) & 0xFFFF, "payload": "int", "t_start": t}
    return {"rank": rank, "status": status, "message": "", "time": 100.0, "history_limit": limit,
            "history": [entry(*h) for h in history], "current": entry(*current) if current else None,
            "stack": [], "groups": {"tp[0,1]": [0, 1]}}


def test_report_finds_a_rank_that_never_reached_the_collective(tmp_path):
    shared = [("tp[0,1]", s, "loop", 10, float(s)) for s in range(4)]
    (tmp_path / "rank0.json").write_text(json.dumps(_state(0, "finished", shared)))
    (tmp_path / "rank1.json").write_text(json.dumps(
        _state(1, "timeout", shared, current=("tp[0,1]", 4, "_can_queue", 42, 4.0))))
    diagnosis = diagnose(str(tmp_path), link_findings=False)
    assert (diagnosis.kind, diagnosis.group, diagnosis.seq) == ("missing", "tp[0,1]", 4)
    by_rank = {s.rank: s for s in diagnosis.sites}
    assert by_rank[0].entry is None and "never reached" in by_rank[0].describe()
    assert by_rank[1].entry["function"] == "_can_queue"
    svg = render_svg(diagnosis)
    root = ET.fromstring(svg)
    texts = [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert texts[0] == "Ranks part at collective #4 of group tp[0,1] (some ranks never got there)"
    assert "rank 0" in texts and "rank 1" in texts and "never got here" in texts
    # one column per sequence number: #0..#3 where both ranks agree, then #4 where they part
    assert [t for t in texts if t.startswith("#")] == ["#0", "#1", "#2", "#3", "#4"]
    assert "waiting" in texts  # rank 1 is stuck in #4
    legend = [t for t in texts if t.startswith("tp_allgather in")]
    assert legend == ["tp_allgather in loop (x.py:10)", "tp_allgather in _can_queue (x.py:42)"]


def test_timeline_of_ranks_in_step_shows_their_last_collectives(tmp_path):
    shared = [("tp[0,1]", s, "loop" if s % 2 else "step", 10 + s % 2, float(s)) for s in range(20)]
    for rank in (0, 1):
        (tmp_path / f"rank{rank}.json").write_text(json.dumps(_state(rank, "finished", shared)))
    root = ET.fromstring(render_svg(diagnose(str(tmp_path), link_findings=False)))
    texts = [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert texts[0] == "Ranks in step: the last 8 collectives of group tp[0,1]"
    assert [t for t in texts if t.startswith("#")] == [f"#{s}" for s in range(12, 20)]
    # two call paths, four times on each of the two ranks, and once each in the legend
    assert texts.count("A") == 9 and texts.count("B") == 9


def test_report_without_divergence(tmp_path):
    shared = [("tp[0,1]", s, "loop", 10, float(s)) for s in range(3)]
    for rank in (0, 1):
        (tmp_path / f"rank{rank}.json").write_text(json.dumps(_state(rank, "finished", shared)))
    diagnosis = diagnose(str(tmp_path), link_findings=False)
    assert not diagnosis.diverged and "no divergence" in diagnosis.text()


def test_watchdog_writes_state_and_aborts_a_stuck_rank(tmp_path):
    script = textwrap.dedent(f"""
        import sys, threading
        sys.path.insert(0, {str(ROOT)!r})
        from cslint.runtime import wrap

        class Stuck:
            rank = 3
            world_size = 4
            calls = 0
            def tp_allgather(self, obj):
                self.calls += 1
                if self.calls > 1:
                    threading.Event().wait()   # a peer that never arrives
                return [obj]

        dist = wrap(Stuck(), report_dir={str(tmp_path)!r}, timeout=0.4, grace=0.1)

        def stuck_here():
            dist.tp_allgather(1)   # the first one (connection set-up) gets a longer allowance
            dist.tp_allgather(2)

        stuck_here()
    """)
    proc = subprocess.run([sys.executable, "-c", script], check=False, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 86, proc.stderr
    state = json.loads((tmp_path / "rank3.json").read_text())
    assert state["status"] == "timeout"
    assert state["current"]["op"] == "tp_allgather" and state["current"]["seq"] == 1
    assert state["current"]["callpath"][0]["function"] == "stuck_here"
    assert any(frame["function"] == "stuck_here" for frame in state["stack"])
    assert "waited" in proc.stderr


def test_maybe_wrap_follows_the_environment(monkeypatch, tmp_path):
    dist = FakeDist(FakeGroup(1), 0)
    monkeypatch.delenv("CSLINT_SANITIZE", raising=False)
    assert maybe_wrap(dist) is dist
    monkeypatch.setenv("CSLINT_SANITIZE", "1")
    wrapped = maybe_wrap(dist, report_dir=str(tmp_path), timeout=0)
    assert isinstance(wrapped, DistributedProxy)
    assert wrapped.tp_allgather(5) == [5]
    assert wrapped.rank == 0  # attributes fall through


def test_wrap_rejects_what_it_cannot_sanitize():
    with pytest.raises(TypeError, match="do not know how to sanitize"):
        wrap(object(), timeout=0)
