"""The fixes shaped the way upstream makes them, checked on small executors of our own.

Each fixture is a package written to a temporary directory and linted with the `tensorrt_llm`
preset (as `tensorrt_llm_patch apply` does); the tests read the rewrite, the label and the reason
the rule gives, re-lint the result, and where it matters run the fixed method against a stand-in
communicator that records the collectives a rank enters.
"""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path

import pytest

from codemods.driver import plan_fixes
from cslint.api import check_paths
from cslint.config import Settings

SETTINGS = Settings(presets=["tensorrt_llm"], rank_local=["self.local_*"])


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def _check(root: Path):
    return check_paths([str(root)], settings=SETTINGS, jobs=1)


def _plan(root: Path):
    result = _check(root)
    return result, plan_fixes(result)


def _fixed_text(plan, name: str) -> str:
    (fix,) = [f for f in plan.files if f.path.endswith(name)]
    return fix.fixed


def _apply(plan) -> None:
    for fix in plan.files:
        if fix.changed:
            Path(fix.path).write_text(fix.fixed, encoding="utf-8")


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class Recorder:
    """A `Distributed` stand-in for one rank of a group whose other ranks send `others`."""

    def __init__(self, others=(), tp_size=2, pp_size=2):
        self.calls: list[str] = []
        self.others = list(others)
        self.tp_size, self.pp_size, self.world_size = tp_size, pp_size, tp_size * pp_size
        self.is_first_pp_rank = True

    def _gather(self, name, obj):
        self.calls.append(name)
        return [obj] + self.others

    def tp_allgather(self, obj):
        return self._gather("tp_allgather", obj)

    def allgather(self, obj):
        return self._gather("allgather", obj)

    def tp_allreduce(self, obj, op=None):
        self.calls.append(f"tp_allreduce:{getattr(op, 'name', op)}")
        values = [obj] + self.others
        return {"MAX": max, "MIN": min}.get(getattr(op, "name", ""), sum)(values)

    def pp_broadcast(self, obj, root=0):
        self.calls.append("pp_broadcast")
        return obj


# -- always-enter keeps the configuration's own exit --------------------------------------------------

FILL_GATE = {
    "executor.py": """\
        class Executor:
            def __init__(self, dist, size, warmup):
                self.dist = dist
                self.benchmark_req_queues_size = size
                self.is_warmup = warmup
                self.local_fill_active = True
                self.active_requests = []

            def insufficient(self):
                if self.benchmark_req_queues_size <= 0 or self.is_warmup or not self.local_fill_active:
                    return False
                status = (len(self.active_requests) > 0, False)
                statuses = self.dist.tp_allgather(status)
                return all(s[0] for s in statuses) and any(s[1] for s in statuses)
        """,
}


def test_always_enter_keeps_the_configuration_exit_in_front(tmp_path):
    root = _write(tmp_path, FILL_GATE)
    result, plan = _plan(root)
    (applied,) = plan.applied
    assert applied.strategy == "always-enter"
    text = _fixed_text(plan, "executor.py")
    head, _, rest = text.partition("exit_early = False")
    assert "if self.benchmark_req_queues_size <= 0 or self.is_warmup:\n            return False" in head
    assert "if not self.local_fill_active:" in rest
    assert "self.dist.tp_allgather(status if not exit_early else (True, False))" in rest
    assert "configuration test" in applied.reason
    _apply(plan)
    module = _load(root / "executor.py", "fill_gate_fixed")
    # the benchmark is off: no rank enters the gather (normal serving pays nothing)
    off = Recorder()
    assert module.Executor(off, 0, False).insufficient() is False and off.calls == []
    # the benchmark is on and this rank's fill phase is over: it still enters, with the neutral status
    done = Recorder(others=[(True, True)])
    executor = module.Executor(done, 8, False)
    executor.local_fill_active = False
    assert executor.insufficient() is False and done.calls == ["tp_allgather"]
    assert not _check(root).findings  # re-lint: the site is gone


# -- consensus: over every group the guarded call reaches, behind the configuration, in the file's idiom --

REBALANCE = {
    "executor.py": """\
        from .communicator import ReduceOp


        class Executor:
            def __init__(self, dist, enabled):
                self.dist = dist
                self.enable_rebalance = enabled
                self.active_requests = []

            def step(self):
                if self.enable_rebalance and len(self.active_requests) > 2:
                    self._agreed_rebalance()

            def _agreed_rebalance(self):
                need = self.dist.cp_broadcast(True, root=0)
                need = any(self.dist.tp_allgather(need))
                return self.dist.pp_broadcast(need, root=0)

            def vote(self):
                return self.dist.tp_allreduce(1, op=ReduceOp.MAX)
        """,
    "communicator.py": """\
        import enum


        class ReduceOp(enum.Enum):
            SUM = 0
            MAX = 1
            MIN = 2
        """,
    "__init__.py": "",
}


def test_consensus_covers_every_group_keeps_the_configuration_in_front_and_uses_the_files_reduce_op(tmp_path):
    root = _write(tmp_path / "pkg", REBALANCE)
    settings_file = tmp_path / "pkg" / "pyproject.toml"
    settings_file.write_text('[tool.cslint]\npresets = ["tensorrt_llm"]\nuniform = ["self.enable_rebalance"]\n')
    result = check_paths([str(root)], jobs=1)
    plan = plan_fixes(result)
    (applied,) = plan.applied
    assert applied.strategy == "consensus"
    text = _fixed_text(plan, "executor.py")
    # world: the call reaches collectives over CP, TP and PP, not only the one the finding names
    assert ("if self.enable_rebalance and bool(self.dist.allreduce(int(bool(len(self.active_requests) > 2)), "
            "op=ReduceOp.MAX)):") in text
    assert "mpi4py" not in text and "MPI." not in text
    assert "cost: one more collective" in applied.reason


# -- consensus on a permission: a pause gate proceeds only where every rank may ----------------------

PAUSE_GATE = {
    "executor.py": """\
        from .communicator import ReduceOp


        class Executor:
            def __init__(self, dist, enabled):
                self.dist = dist
                self.enable_rebalance = enabled
                self.local_transfers = []
                self.paused = 0

            def _can_pause_for_rebalance(self):
                return not self.local_transfers

            def step(self):
                if self.enable_rebalance and self._can_pause_for_rebalance():
                    self._agreed_rebalance()

            def _agreed_rebalance(self):
                self.paused += 1
                return self.dist.tp_allreduce(1, op=ReduceOp.MAX)
        """,
    "communicator.py": REBALANCE["communicator.py"],
    "__init__.py": "",
}


def test_consensus_on_a_permission_gate_proceeds_only_where_every_rank_may(tmp_path):
    """`_can_pause_for_rebalance()` says this rank may pause: the agreed gate is a MIN over the group
    (every rank may), labelled safe, and a rank that may pause is held back while a peer may not."""
    root = _write(tmp_path / "pausegate", PAUSE_GATE)
    (tmp_path / "pausegate" / "pyproject.toml").write_text(
        '[tool.cslint]\npresets = ["tensorrt_llm"]\nuniform = ["self.enable_rebalance"]\n'
        'rank-local = ["self.local_*"]\n')
    result = check_paths([str(root)], jobs=1)
    (finding,) = result.findings
    assert finding.fix_facts.every_rank_may and finding.fix.safe
    plan = plan_fixes(result, unsafe=False)
    (applied,) = plan.applied
    assert (applied.strategy, applied.safe) == ("consensus", True)
    text = _fixed_text(plan, "executor.py")
    assert ("if self.enable_rebalance and bool(self.dist.tp_allreduce(int(bool(self._can_pause_for_rebalance())), "
            "op=ReduceOp.MIN)):") in text
    assert "only where it holds on every rank" in applied.reason
    _apply(plan)
    sys.path.insert(0, str(tmp_path))
    try:
        module = importlib.import_module("pausegate.executor")
    finally:
        sys.path.remove(str(tmp_path))
        for name in ("pausegate", "pausegate.executor", "pausegate.communicator"):
            sys.modules.pop(name, None)
    held = Recorder(others=[0])  # a peer with a transfer in flight may not pause
    executor = module.Executor(held, True)
    executor.step()
    assert executor.paused == 0 and held.calls == ["tp_allreduce:MIN"]
    every = Recorder(others=[1])
    executor = module.Executor(every, True)
    executor.step()
    assert executor.paused == 1 and every.calls == ["tp_allreduce:MIN", "tp_allreduce:MAX"]


def test_consensus_on_a_need_any_rank_may_trigger_stays_an_any(tmp_path):
    """A gate that asks whether the rank has something to do (`_needs_rebalance()`) is any rank's:
    MAX, and unsafe as before (a rank without the need now runs the branch too)."""
    files = dict(PAUSE_GATE)
    files["executor.py"] = PAUSE_GATE["executor.py"].replace("_can_pause_for_rebalance", "_needs_rebalance")
    root = _write(tmp_path / "pkg", files)
    (tmp_path / "pkg" / "pyproject.toml").write_text(
        '[tool.cslint]\npresets = ["tensorrt_llm"]\nuniform = ["self.enable_rebalance"]\n'
        'rank-local = ["self.local_*"]\n')
    result = check_paths([str(root)], jobs=1)
    (finding,) = result.findings
    assert not finding.fix_facts.every_rank_may and not finding.fix.safe
    plan = plan_fixes(result)
    (applied,) = plan.applied
    assert (applied.strategy, applied.safe) == ("consensus", False)
    assert "op=ReduceOp.MAX)):" in _fixed_text(plan, "executor.py")


SEVERAL_EXITS = {
    "executor.py": """\
        class Executor:
            def __init__(self, dist, size):
                self.dist = dist
                self.benchmark_req_queues_size = size
                self.local_fill_active = True
                self.local_queue = []

            def insufficient(self):
                if self.benchmark_req_queues_size <= 0:
                    return False
                if not self.local_fill_active:
                    return False
                if not self.local_queue:
                    return None
                statuses = self.dist.tp_allgather(len(self.local_queue) > 4)
                return any(statuses)
        """,
}


def test_always_enter_defers_every_rank_local_exit_before_the_collective_in_one_pass(tmp_path):
    """Two rank-local exits before the gather: the finding names the nearer one and lists the other;
    both are deferred, the configuration exit stays as it is, and re-lint reports nothing."""
    root = _write(tmp_path, SEVERAL_EXITS)
    result, plan = _plan(root)
    (finding,) = result.findings
    assert finding.condition == "not self.local_queue"
    assert [text for _guard, text, _uniform, _op in finding.fix_facts.other_exits] == ["not self.local_fill_active"]
    (applied,) = plan.applied
    assert applied.strategy == "always-enter"
    text = _fixed_text(plan, "executor.py")
    assert "if self.benchmark_req_queues_size <= 0:\n            return False\n" in text
    _apply(plan)
    assert not _check(root).findings
    module = _load(root / "executor.py", "several_exits")
    for fill_active, queue, expected in ((False, [1], False), (True, [], None), (True, [1] * 5, True)):
        dist = Recorder(others=[False])
        executor = module.Executor(dist, 8)
        executor.local_fill_active, executor.local_queue = fill_active, queue
        assert executor.insufficient() is expected
        assert dist.calls == ["tp_allgather"]  # every rank enters the gather, whichever exit it takes
    off = Recorder()
    assert module.Executor(off, 0).insufficient() is False and off.calls == []


# -- an exit that leaves the event loop: the ranks leave together ---------------------------------------

DRAIN = {
    "executor.py": """\
        class Executor:
            def __init__(self, dist):
                self.dist = dist
                self.local_shutdown = False
                self.active_requests = []

            def loop(self):
                while True:
                    if self.local_shutdown and not self.active_requests:
                        break
                    sizes = self.dist.tp_allgather(len(self.active_requests))
                    self.step(sum(sizes))

            def step(self, total):
                pass
        """,
}


def test_an_event_loop_exit_is_agreed_so_that_the_ranks_leave_together(tmp_path):
    root = _write(tmp_path, DRAIN)
    result, plan = _plan(root)
    (finding,) = result.findings
    assert finding.fix_facts.leaves_unbounded_loop
    (applied,) = plan.applied
    assert applied.strategy == "consensus"
    text = _fixed_text(plan, "executor.py")
    # under attention-DP `self.active_requests` differs too: nothing of the test stays outside the agreement
    assert "if all(self.dist.tp_allgather(bool(self.local_shutdown and not self.active_requests))):" in text
    assert "once every rank's condition holds" in applied.reason


def test_leaving_together_is_refused_where_a_staying_rank_would_read_what_it_lacks(tmp_path):
    root = _write(tmp_path, {"executor.py": """\
        class Executor:
            def __init__(self, dist):
                self.dist = dist
                self.local_queue = []

            def loop(self):
                while True:
                    batch = self.local_queue.pop() if self.local_queue else None
                    if batch is None:
                        break
                    sizes = self.dist.tp_allgather(batch.size)
                    batch.run(sizes)
        """})
    result, plan = _plan(root)
    assert result.findings and not plan.applied
    reasons = " ".join(r.reason for r in plan.refused)
    assert "a rank without `batch` would go on running the rest of the loop, which reads it" in reasons


DRAIN_THROUGH_A_CALLER = {
    "executor.py": """\
        class Executor:
            def __init__(self, dist):
                self.dist = dist
                self.local_shutdown = False
                self.active_requests = []
                self.passes = 0

            def _should_stop(self):
                return self.local_shutdown and not self.active_requests

            def _schedule(self):
                if self._should_stop():
                    return None, None
                sizes = self.dist.tp_allgather(len(self.active_requests))
                return list(self.active_requests), max(sizes)

            def loop(self):
                while True:
                    batch, widest = self._schedule()
                    if batch is None:
                        break
                    self.passes += 1
                    self.step(batch, widest)

            def step(self, batch, widest):
                self.dist.tp_allreduce(len(batch))
                if self.active_requests:
                    self.active_requests.pop()
        """,
}


def test_a_return_that_ends_the_callers_event_loop_is_agreed_so_that_the_ranks_leave_together(tmp_path):
    """`return None` where the caller breaks out of `while True` on `None`: deferring the return keeps
    nobody together (the caller still leaves), and "any rank stops" would make a rank that still holds
    requests leave the loop with them; the ranks return together once every rank's stop test holds, a
    drained rank going on with the scheduling, idle."""
    root = _write(tmp_path, DRAIN_THROUGH_A_CALLER)
    result, plan = _plan(root)
    (finding,) = [f for f in result.findings if f.function == "Executor._schedule"]
    assert finding.fix_facts.ends_callers_loop and finding.fix_facts.leaves_unbounded_loop
    from cslint.rules import get_rule

    why_not = get_rule(finding.code).why_not(finding, "always-enter")
    assert "returns nothing to a caller that leaves its event loop" in why_not
    (applied,) = [a for a in plan.applied if a.finding.function == "Executor._schedule"]
    assert applied.strategy == "consensus"
    text = _fixed_text(plan, "executor.py")
    assert "if all(self.dist.tp_allgather(bool(self._should_stop()))):" in text
    assert "goes on with the rest of the function" in applied.reason
    # the loop's own `break` on the missing batch is not rewritten: a rank without a batch cannot stay
    assert "if batch is None:\n" in text

    _apply(plan)
    module = _load(root / "executor.py", "drain_through_a_caller")

    class Peer(Recorder):
        """The other rank of the group: it holds one request, served by the next step."""

        def __init__(self):
            super().__init__()
            self.peer_requests = 1

        def tp_allgather(self, obj):
            self.calls.append("tp_allgather")
            peer = self.peer_requests == 0 if isinstance(obj, bool) else self.peer_requests  # stop vote or size
            return [obj, peer]

        def tp_allreduce(self, obj, op=None):
            self.calls.append("tp_allreduce")
            self.peer_requests -= 1
            return obj + 1

    dist = Peer()
    drained = module.Executor(dist)
    drained.local_shutdown = True
    drained.loop()
    # the drained rank stayed for its peer's last pass (the schedule gather and the step), idle,
    # then both returned nothing together
    assert drained.passes == 1
    assert dist.calls == ["tp_allgather", "tp_allgather", "tp_allreduce", "tp_allgather"]


# -- consensus checked against what a rank whose own condition is false does ---------------------------

PRESENCE = {
    "executor.py": """\
        class Executor:
            def __init__(self, dist):
                self.dist = dist
                self.local_batch = None

            def flush(self):
                batch = self.local_batch
                if batch is not None:
                    self._publish(batch.responses)

            def _publish(self, responses):
                gathered = self.dist.tp_gather(responses, root=0)
                return gathered
        """,
}


def test_a_consensus_that_would_make_a_rank_act_on_nothing_is_refused(tmp_path):
    root = _write(tmp_path, PRESENCE)
    result, plan = _plan(root)
    assert result.findings and not plan.applied
    reasons = " ".join(r.reason for r in plan.refused)
    assert "a rank without `batch` would act on an empty or None value" in reasons


# -- propagate: the condition travels in the schedule the class already broadcasts ---------------------

SCHEDULE = {
    "__init__.py": "",
    "schedule.py": """\
        from dataclasses import dataclass, field


        @dataclass
        class Schedule:
            ids: list = field(default_factory=list)

            @classmethod
            def of(cls, requests):
                return cls([r.id for r in requests])
        """,
    "transfer.py": """\
        class Transfers:
            def __init__(self, dist):
                self._dist = dist

            def check_transfer_status(self):
                return self._dist.pp_allgather(1)
        """,
    "executor.py": """\
        from .schedule import Schedule
        from .transfer import Transfers


        class Executor:
            def __init__(self, dist):
                self.dist = dist
                self.transfers = Transfers(dist)
                self.active_requests = []

            def loop(self):
                for _ in range(3):
                    self._check_transfers()
                    self._schedule_and_propagate()

            def _check_transfers(self):
                in_flight = any(r.in_flight for r in self.active_requests)
                if in_flight:
                    self.transfers.check_transfer_status()

            def _schedule_and_propagate(self):
                if self.dist.is_first_pp_rank:
                    schedule = Schedule.of(self.active_requests)
                else:
                    schedule = None
                schedule = self.dist.pp_broadcast(schedule, root=0)
                return schedule.ids
        """,
}


def test_propagate_carries_the_condition_in_the_existing_broadcast(tmp_path):
    root = _write(tmp_path / "pkg", SCHEDULE)
    result, plan = _plan(root)
    (finding,) = [f for f in result.findings if f.function.endswith("_check_transfers")]
    assert finding.fix_facts.carrier is not None
    assert finding.fix_facts.carrier.function == "Executor._schedule_and_propagate"
    (applied,) = plan.applied
    assert applied.strategy == "propagate" and not applied.safe
    assert "no collective is added" in applied.reason
    executor = _fixed_text(plan, "executor.py")
    assert "if (in_flight if self.dist.pp_size == 1 else self._scheduled_in_flight):" in executor
    assert "schedule.in_flight = any(r.in_flight for r in self.active_requests)" in executor
    assert "self._scheduled_in_flight = schedule.in_flight" in executor
    assert "self._scheduled_in_flight = False" in executor  # before the first broadcast
    assert "in_flight: bool = False" in _fixed_text(plan, "schedule.py")
    assert executor.count("pp_allgather") == 0  # nothing added
    _apply(plan)
    after = _check(root)
    assert not [f for f in after.findings if f.function.endswith("_check_transfers")]
    assert not any(f.changed for f in plan_fixes(after).files)  # a second run changes nothing


def test_propagate_is_refused_when_the_broadcasting_method_cannot_compute_the_condition(tmp_path):
    files = dict(SCHEDULE)
    files["executor.py"] = files["executor.py"].replace(
        "in_flight = any(r.in_flight for r in self.active_requests)",
        "in_flight = self.transfers.busy() or any(r.in_flight for r in self.active_requests)")
    files["transfer.py"] += "\n            def busy(self):\n                return False\n"
    root = _write(tmp_path / "pkg", files)
    result, plan = _plan(root)
    (applied,) = plan.applied
    assert applied.strategy == "consensus"  # the next strategy, with the reason propagate did not fit
    assert "propagate does not fit" in applied.reason and "computed with calls" in applied.reason


# -- the confidence a finding needs before its site is rewritten ---------------------------------------

AGREED = {
    "executor.py": """\
        class Executor:
            def __init__(self, dist):
                self.dist = dist
                self.active_requests = []

            def _status(self):
                sizes = self.dist.tp_allgather(len(self.active_requests))
                status = (sum(sizes) > 0, len(self.active_requests))
                return status

            def step(self):
                busy, mine = self._status()
                if busy:
                    self._sync()

            def _sync(self):
                return self.dist.tp_allgather(len(self.active_requests))
        """,
}


def test_a_finding_whose_value_may_be_agreed_already_is_for_review(tmp_path):
    from tensorrt_llm_patch.apply import REVIEW, apply_tree

    root = _write(tmp_path / "tree", AGREED)
    result = _check(root)
    (finding,) = result.findings
    assert finding.confidence.level == "low"
    assert [d.kind for d in finding.confidence.doubts][0] == "agreed"
    assert finding.to_json()["confidence"]["doubts"][0]["strong"] is True
    report = apply_tree(root, require_trtllm=False, include=["*"], settings=SETTINGS)
    (hazard,) = report.hazards
    assert hazard.outcome == REVIEW and "may already be the same on every rank" in hazard.reason
    assert report.nothing_to_do
    lenient = apply_tree(root, require_trtllm=False, include=["*"], settings=SETTINGS, min_confidence="low")
    (hazard,) = lenient.hazards
    # planned now, and the consensus rule refuses to agree twice on a path that agrees already
    assert hazard.outcome == "refused" and "agrees already" in hazard.reason


TWO_EVENT_LOOPS = {
    "executor.py": """\
        class Executor:
            def __init__(self, dist, pipelined):
                self.dist = dist
                self.pipelined = pipelined
                self.local_done = False
                self.iter_counter = 0

            def run(self):
                if self.pipelined:
                    self._loop_pipelined()
                else:
                    self._loop()

            def _loop_pipelined(self):
                while True:
                    if self.local_done:
                        break
                    self.dist.pp_broadcast(self.iter_counter, root=0)
                    self.iter_counter += 1

            def _loop(self):
                while True:
                    if self.iter_counter % 8 == 0:
                        self.dist.tp_allgather(self.iter_counter)
                    if self.dist.tp_allreduce(int(self.local_done)):
                        break
        """,
}


def test_a_field_only_another_event_loop_writes_is_a_strong_doubt(tmp_path):
    """The counter diverges in the pipelined loop (a rank leaves it on its own test and stops
    counting), but the other loop, which reads it, never runs in the same process: the finding
    there stays, with a strong doubt that keeps it out of the patch; the pipelined loop's own
    findings carry no such doubt."""
    root = _write(tmp_path / "tree", TWO_EVENT_LOOPS)
    result = _check(root)
    by_function = {f.function: f for f in result.findings}
    reader = by_function["Executor._loop"]
    doubts = {d.kind: d for d in reader.confidence.doubts}
    assert "other-loop" in doubts and doubts["other-loop"].strong, reader.confidence
    assert "`Executor._loop_pipelined` writes" in doubts["other-loop"].note
    assert reader.confidence.level == "low"
    writer = by_function["Executor._loop_pipelined"]
    assert "other-loop" not in {d.kind for d in writer.confidence.doubts}


FATAL_FLAG = {
    "executor.py": """\
        class Executor:
            def __init__(self, dist):
                self.dist = dist
                self.is_shutdown = False
                self.local_errors = 0

            def _handle_error(self):
                is_fatal = self.local_errors > 3
                if is_fatal:
                    self.dist.tp_allgather(self.local_errors)
                    self.is_shutdown = True

            def _loop(self):
                while True:
                    self._handle_error()
                    if not self.is_shutdown:
                        self.dist.tp_allgather(0)
                    if self.dist.tp_allreduce(int(self.is_shutdown)):
                        break
        """,
}


def test_a_flag_set_where_the_ranks_already_part_is_reported_there_not_downstream(tmp_path):
    """The shutdown flag is set inside the rank-local `if is_fatal:`, itself a finding (its gather);
    the loop's test of the flag reads that same divergence downstream: a strong doubt keeps it out of
    the patch, while the finding where the ranks part keeps its confidence.  Every flow of the loop's
    test goes through that flag, so the root-cause report leaves it out; the per-site one shows it."""
    root = _write(tmp_path / "tree", FATAL_FLAG)
    assert "Executor._loop" not in {f.function for f in _check(root).findings}
    by_function = {f.function: f for f in check_paths([str(root)], settings=SETTINGS, jobs=1,
                                                      report="per-site").findings}
    source, reader = by_function["Executor._handle_error"], by_function["Executor._loop"]
    assert source.confidence.level == "high", source.confidence
    doubts = {d.kind: d for d in reader.confidence.doubts}
    assert "reported-upstream" in doubts and doubts["reported-upstream"].strong, reader.confidence
    assert "`self.is_shutdown`, set inside the condition at line 9" in doubts["reported-upstream"].note
    assert "the call at line 10" in doubts["reported-upstream"].note
    assert "read-downstream" in doubts and doubts["read-downstream"].strong
    assert reader.confidence.level == "low"
    from tensorrt_llm_patch.apply import REVIEW, apply_tree

    report = apply_tree(root, require_trtllm=False, include=["*"], settings=SETTINGS)
    outcomes = {h.finding.function: h.outcome for h in report.hazards}
    assert outcomes["Executor._loop"] == REVIEW and outcomes["Executor._handle_error"] != REVIEW
    assert "reads that divergence downstream" in next(h.reason for h in report.hazards
                                                       if h.finding.function == "Executor._loop")


AGREED_BREAK_TEST = {
    "executor.py": """\
        class Executor:
            def __init__(self, dist):
                self.dist = dist
                self.active_requests = []

            def _schedule(self):
                return self.dist.tp_broadcast(len(self.active_requests), root=0)

            def _gate(self, ready):
                if not ready:
                    self.dist.tp_allgather(1)
                return True

            def _loop(self):
                ready = False
                while True:
                    if self._schedule() == 0 and not self.active_requests:
                        break
                    self.dist.tp_allgather(0)
                    ready = True
                self._gate(ready)
        """,
}


def test_a_source_read_in_a_test_of_an_agreed_call_result_is_in_doubt_downstream(tmp_path):
    """`self.active_requests` is per-rank state by its name; the loop's exit test that reads it also
    reads the result of `_schedule()`, which broadcasts.  What flows on from that test (`ready`, read
    after the loop, then the gate's argument) may be agreed already, like the test itself: the gate's
    own test reads no call, so the doubt comes from the test where the flow starts."""
    root = _write(tmp_path / "tree", AGREED_BREAK_TEST)
    by_function = {f.function: f for f in _check(root).findings}
    gate = by_function["Executor._gate"]
    assert gate.source == "self.active_requests"
    assert [d.kind for d in gate.confidence.doubts] == ["agreed"], gate.confidence
    assert "`self._schedule()` (line 17)" in gate.confidence.doubts[0].note
    assert gate.confidence.level == "low"


@pytest.mark.parametrize("level", ["high", "medium", "low"])
def test_min_confidence_is_validated(tmp_path, level):
    from tensorrt_llm_patch.apply import PatchError, apply_tree

    root = _write(tmp_path / "tree", FILL_GATE)
    apply_tree(root, require_trtllm=False, include=["*"], settings=SETTINGS, min_confidence=level)
    with pytest.raises(PatchError):
        apply_tree(root, require_trtllm=False, include=["*"], settings=SETTINGS, min_confidence="sure")


def test_permission_tests_are_read_from_the_predicates_last_name():
    from cslint.presets import permission_test

    assert permission_test("self._can_pause_for_rebalance()") is True
    assert permission_test("not self.may_evict") is False
    assert permission_test("self._needs_rebalance()") is None
    assert permission_test("self.cancelled") is None  # a word, not the permission `can`
    assert permission_test("self.can_serve(request)") is None  # asks about an argument, not this rank
