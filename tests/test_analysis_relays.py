"""Pipeline relays (issue 14, complementary-role-arms): a count that the
first stage agrees on (a broadcast over its TP+CP group, or a group of one
rank where the size test fails) and that every later stage receives from the
stage before it and sends on to the next is the same on every rank, so a
loop over it on the ranks that did not compute it runs as often as the
computing rank's own loop.  Each shape that must stay quiet sits beside one
that must still be reported."""

import ast
import dataclasses
import importlib
import textwrap

from cslint.analysis.cfg import build_cfg
from cslint.analysis.relays import relay_edges
from cslint.api import check_source
from cslint.presets import Preset, load_presets, merge_presets

TRTLLM = load_presets(["torch_distributed", "tensorrt_llm"])

RELAY = """
    class Engine:
        def __init__(self, dist):
            self.dist = dist
            self.pending = []
            self.ready = []

        def _finish(self, item):
            self.dist.allgather(item)

        def _relay(self, count):
            if self.dist.is_first_pp_rank and self.dist.tp_size * self.dist.cp_size > 1:
                with self.timer():
                    count = self.dist.tp_cp_broadcast(count, root=0)
            if not self.dist.is_first_pp_rank:
                with self.timer():
                    count = self.dist.recv_object(src=self.dist.prev_pp_rank, tag=5)
            if not self.dist.is_last_pp_rank:
                self.handle = self.dist.isend_object(count, dest=self.dist.next_pp_rank, tag=5)
            return count

        def _relay_tp_only(self, count):
            if self.dist.is_first_pp_rank and self.dist.tp_size > 1:
                count = self.dist.tp_broadcast(count, root=0)
            if not self.dist.is_first_pp_rank:
                count = self.dist.recv_object(src=self.dist.prev_pp_rank, tag=5)
            if not self.dist.is_last_pp_rank:
                self.dist.isend_object(count, dest=self.dist.next_pp_rank, tag=5)
            return count

        def _received_not_sent(self, count):
            if self.dist.is_first_pp_rank and self.dist.tp_size * self.dist.cp_size > 1:
                count = self.dist.tp_cp_broadcast(count, root=0)
            if not self.dist.is_first_pp_rank:
                count = self.dist.recv_object(src=self.dist.prev_pp_rank, tag=5)
            if not self.dist.is_last_pp_rank:
                self.dist.isend_object(self.pending, dest=self.dist.next_pp_rank, tag=5)
            return count

        def _finish_all(self, count):
            if self.dist.rank != 0:
                done = 0
                while done < count:
                    self._finish(self.pending.pop())
                    done += 1
            else:
                for _ in range(count):
                    self._finish(self.ready.pop())

        def step(self):
            count = 0
            if self.dist.rank == 0:
                count = len(self.ready)
            self._finish_all(self._relay(count))

        def _finish_tp_only(self, count):
            if self.dist.rank != 0:
                done = 0
                while done < count:
                    self._finish(self.pending.pop())  # reported: the CP ranks of the first stage may differ
                    done += 1

        def step_tp_only(self):
            count = len(self.ready) if self.dist.rank == 0 else 0
            self._finish_tp_only(self._relay_tp_only(count))

        def _finish_unsent(self, count):
            if self.dist.rank != 0:
                done = 0
                while done < count:
                    self._finish(self.pending.pop())  # reported: what is received is not the count
                    done += 1

        def step_unsent(self):
            count = len(self.ready) if self.dist.rank == 0 else 0
            self._finish_unsent(self._received_not_sent(count))
"""


def _reported(source: str) -> list:
    return [n for n, text in enumerate(textwrap.dedent(source).splitlines(), 1) if "# reported" in text]


def test_a_count_relayed_along_the_stages_is_the_first_stages_on_every_rank():
    found = check_source(textwrap.dedent(RELAY), presets=["torch_distributed", "tensorrt_llm"], report="per-site")
    assert sorted(f.line for f in found.findings) == _reported(RELAY)


def test_the_relay_edges_of_a_function():
    module = ast.parse(textwrap.dedent(RELAY)).body[0]
    methods = {f.name: f for f in module.body if isinstance(f, ast.FunctionDef)}

    def edges(name):
        func = methods[name]
        graph = build_cfg(func)
        lines = {node.id: getattr(node.stmt, "lineno", 0) for node in graph.nodes}
        return sorted((lines[node], groups, tuple(names), entry)
                      for (node, _succ), (groups, names, entry) in relay_edges(graph, func, TRTLLM, None).items())

    assert edges("_relay") == [(12, ("cp", "tp"), ("count",), False),  # past the first stage's broadcast
                               (15, ("pp",), ("count",), False),  # the first stage, past the receive
                               (17, ("pp",), ("count",), True)]  # out of the receive
    assert [entry[:2] for entry in edges("_relay_tp_only")] == [(23, ("tp",)), (25, ("pp",)), (26, ("pp",))]
    assert edges("_received_not_sent") == []


PEER_API = """
    import os


    class Stage:
        def __init__(self, link):
            self.link = link

        def _forward(self, batch):
            if self.link.is_first_pp_rank:
                batch = self.link.tp_broadcast(batch, root=0)
            if not self.link.is_first_pp_rank:
                batch = self.link.fetch_from_peer(self.link.prev_pp_rank)
            if not self.link.is_last_pp_rank:
                self.link.hand_on(batch, self.link.next_pp_rank)
            return batch

        def _window(self, batch):
            if self.link.is_first_pp_rank:
                batch = self.link.tp_broadcast(batch, root=0)
            if not self.link.is_first_pp_rank:
                batch = self.link.recv_window(self.link.prev_pp_rank)
            if not self.link.is_last_pp_rank:
                self.link.isend_object(batch, self.link.next_pp_rank)
            return batch

        def _chosen_send(self, batch):
            if not self.link.is_first_pp_rank:
                batch = self.link.recv_object(self.link.prev_pp_rank)
            send = self.link.isend_object if os.environ.get("ASYNC") else self.link.send_object
            if not self.link.is_last_pp_rank:
                send(batch, self.link.next_pp_rank)
            return batch

        def _named_send(self, batch):
            if not self.link.is_first_pp_rank:
                batch = self.link.recv_object(self.link.prev_pp_rank)
            sender = self.link.isend_object
            sender = self.link.stage_log
            if not self.link.is_last_pp_rank:
                sender(batch, self.link.next_pp_rank)
            return batch
"""


def _edge_lines(source: str, name: str, knowledge) -> list:
    module = ast.parse(textwrap.dedent(source))
    func = next(f for f in ast.walk(module) if isinstance(f, ast.FunctionDef) and f.name == name)
    graph = build_cfg(func)
    lines = {node.id: getattr(node.stmt, "lineno", 0) for node in graph.nodes}
    return sorted((lines[node], groups) for (node, _succ), (groups, _names, _entry)
                  in relay_edges(graph, func, knowledge, None).items())


def test_the_receives_and_sends_of_a_relay_are_the_loaded_presets_point_to_point_calls():
    peer = Preset(name="peer_link", p2p_receives=["fetch_from_peer"], p2p_sends=["hand_on"])
    with_peer = merge_presets([_pack("torch_distributed"), _pack("tensorrt_llm"), peer])
    assert "fetch_from_peer" in with_peer.p2p_receives and "recv_object" in with_peer.p2p_receives
    relayed = [(10, ("world",)), (12, ("pp",)), (13, ("pp",))]
    assert _edge_lines(PEER_API, "_forward", with_peer) == relayed
    assert _edge_lines(PEER_API, "_forward", TRTLLM) == []  # no loaded preset knows that API
    # a call named like a receive that no preset lists is no receive
    assert _edge_lines(PEER_API, "_window", with_peer) == []
    assert _edge_lines(PEER_API, "_window", TRTLLM) == []


def test_a_local_name_bound_only_to_sends_is_a_send():
    assert _edge_lines(PEER_API, "_chosen_send", TRTLLM) == [(28, ("pp",)), (29, ("pp",))]
    assert _edge_lines(PEER_API, "_named_send", TRTLLM) == []  # also bound to what is no send


def _pack(name: str) -> Preset:
    return importlib.import_module(f"cslint.presets.{name}").PRESET


KEYWORD_PEERS = """
    def relay_schedule(group, comm, schedule, is_first_pp_rank, is_last_pp_rank, prev_rank, next_rank):
        if not is_first_pp_rank:
            schedule = group.recv_object(src=prev_rank)
        if not is_last_pp_rank:
            group.send_object(schedule, dst=next_rank)
        return schedule

    def relay_mpi(comm, schedule, is_first_pp_rank, is_last_pp_rank, prev_rank, next_rank):
        if not is_first_pp_rank:
            schedule = comm.recv(source=prev_rank, tag=3)
        if not is_last_pp_rank:
            comm.send(schedule, dest=next_rank, tag=3)
        return schedule
"""


def test_the_peer_of_a_point_to_point_call_is_named_by_its_apis_keyword():
    """A group coordinator sends with ``dst=``, mpi4py receives with ``source=``."""
    defaults = load_presets(["torch_distributed", "mpi4py", "vllm"])
    assert _edge_lines(KEYWORD_PEERS, "relay_schedule", defaults) == [(3, ("pp",)), (4, ("pp",))]
    assert _edge_lines(KEYWORD_PEERS, "relay_mpi", defaults) == [(10, ("pp",)), (11, ("pp",))]
    without_source = dataclasses.replace(defaults, p2p_peer_keywords=defaults.p2p_peer_keywords - {"source"})
    assert _edge_lines(KEYWORD_PEERS, "relay_mpi", without_source) == []  # no peer named: no relay


REBUILT = """
    class Planner:
        def __init__(self, dist, spread):
            self.dist = dist
            self.spread = spread
            self.waiting = []
            self.handles = {}

        def _plan(self):
            return make_plan(self.waiting)

        def _shared_plan(self, slot):
            self.dist.barrier()
            plan = None
            if self.dist.is_first_pp_rank:
                plan = self._plan()
                wire = Wire.pack(plan)
            if not self.dist.is_first_pp_rank:
                wire = self.dist.recv_object(self.dist.prev_pp_rank, 7)
            if not self.dist.is_last_pp_rank:
                self.handles[slot] = self.dist.isend_object(wire, self.dist.next_pp_rank, 7)
            if plan is None:
                plan = wire.unpack(self.waiting)
            return plan

        def _leader_plan(self, slot):
            self.dist.barrier()
            plan = None
            wire = None
            if self.dist.rank == 0:
                plan = self._plan()
                wire = Wire.pack(plan)
            if not self.dist.is_first_pp_rank:
                wire = self.dist.recv_object(self.dist.prev_pp_rank, 7)
            if not self.dist.is_last_pp_rank:
                self.handles[slot] = self.dist.isend_object(wire, self.dist.next_pp_rank, 7)
            if plan is None:
                plan = wire.unpack(self.waiting)
            return plan

        def _replaced_plan(self, slot):
            self.dist.barrier()
            plan = None
            if self.dist.is_first_pp_rank:
                plan = self._plan()
                wire = Wire.pack(plan)
            if self.dist.is_first_pp_rank and self.spread:
                wire = self.dist.tp_broadcast(wire, root=0)
            if not self.dist.is_first_pp_rank:
                wire = self.dist.recv_object(self.dist.prev_pp_rank, 7)
            if not self.dist.is_last_pp_rank:
                self.handles[slot] = self.dist.isend_object(wire, self.dist.next_pp_rank, 7)
            if plan is None:
                plan = wire.unpack(self.waiting)
            return plan

        def _emit(self, plan):
            self.dist.allgather(plan.size)

        def run_shared(self):
            while True:
                plan = self._shared_plan(0)
                if plan.size == 0:
                    self._emit(plan)

        def run_leader(self):
            while True:
                plan = self._leader_plan(0)
                if plan.size == 0:
                    self._emit(plan)  # reported: the first stage's other ranks unpack nothing

        def run_replaced(self):
            while True:
                plan = self._replaced_plan(0)
                if plan.size == 0:
                    self._emit(plan)  # reported: a packing rank no root keeps a plan its later stages never see
"""


def test_a_value_each_later_stage_rebuilds_from_the_relayed_one_is_the_first_stages():
    """``if plan is None: plan = wire.unpack()`` past a relay of the ``wire``
    the first stage packed ``plan`` into: each rank of a later stage holds
    what its peer of the first stage holds."""
    found = check_source(textwrap.dedent(REBUILT), presets=["torch_distributed", "tensorrt_llm"], report="per-site")
    assert sorted(f.line for f in found.findings) == _reported(REBUILT)


def test_the_rebuilt_names_are_agreed_over_the_stages_on_the_edges_past_the_rebuild():
    module = ast.parse(textwrap.dedent(REBUILT)).body[0]
    methods = {f.name: f for f in module.body if isinstance(f, ast.FunctionDef)}

    def rebuilt(name):
        func = methods[name]
        graph = build_cfg(func)
        lines = {node.id: getattr(node.stmt, "lineno", 0) for node in graph.nodes}
        return sorted((lines[node], groups) for (node, _succ), (groups, names, _entry)
                      in relay_edges(graph, func, TRTLLM, None).items() if names == {"plan"})

    assert rebuilt("_shared_plan") == [(22, ("pp",)), (23, ("pp",))]  # the test (plan kept) and the unpacking
    assert rebuilt("_leader_plan") == [(37, ("pp",)), (38, ("pp",))]
    assert rebuilt("_replaced_plan") == []


STAGE_INDEX = """
    import torch.distributed as dist


    class ReadyPoller:
        def __init__(self, tp_group, tp_size, pp_group, pp_rank, pp_size):
            self.tp_group = tp_group
            self.tp_size = tp_size
            self.pp_group = pp_group
            self.pp_rank = pp_rank
            self.pp_size = pp_size
            self.waiting = []
            self.pending_sends = []

        def _hand_down(self, ready, failed):
            if self.pp_size <= 1 or self.pp_group is None:
                return ready, failed
            data = (ready, failed)
            if self.pp_rank > 0:
                data = self.pp_group.recv_object(src=self.pp_rank - 1, tag=3)
            if self.pp_rank + 1 < self.pp_size:
                self.pending_sends.extend(self.pp_group.send_object(data, dst=self.pp_rank + 1, tag=3))
            return data

        def _merge_down(self, ready, failed):
            data = (ready, failed)
            if self.pp_rank > 0:
                data = self.pp_group.recv_object(src=self.pp_rank - 1, tag=4)
            data = (data[0] | ready, data[1] | failed)  # each stage adds its own before handing on
            if self.pp_rank + 1 < self.pp_size:
                self.pending_sends.extend(self.pp_group.send_object(data, dst=self.pp_rank + 1, tag=4))
            return data

        def _poll_first_stage(self):
            ready, failed = set(), set()
            if self.pp_rank == 0:
                for i, item in enumerate(self.waiting):
                    if item.done():
                        ready.add(i)
                gathered = [None] * self.tp_size
                dist.all_gather_object(gathered, (ready, failed), group=self.tp_group)
                ready = set.intersection(*[g[0] for g in gathered])
                failed = set.union(*[g[1] for g in gathered])
            return ready, failed

        def take_ready(self):
            ready, failed = self._poll_first_stage()
            ready, failed = self._hand_down(ready, failed)
            return [self.waiting[i] for i in ready]

        def take_merged(self):
            ready, failed = self._poll_first_stage()
            ready, failed = self._merge_down(ready, failed)
            return [self.waiting[i] for i in ready]

        def step(self, flags):
            if self.take_ready():
                dist.all_reduce(flags)

        def step_merged(self, flags):
            if self.take_merged():
                dist.all_reduce(flags)  # reported: each stage merged its own poll into what it hands on
"""


def test_a_value_handed_down_by_stage_index_from_a_helper_with_no_collective_is_the_first_stages():
    """``if pp_rank > 0: data = recv_object(src=pp_rank - 1)`` and a send to
    ``pp_rank + 1``: every later stage holds what the first stage decided (its
    TP ranks agreed by the gather), though the helper itself reaches no
    collective (so its dataflow, not the summary walk, reads it); a stage that
    adds its own result before handing the value on holds its own."""
    found = check_source(textwrap.dedent(STAGE_INDEX), presets=["torch_distributed", "sglang"], report="per-site")
    assert sorted(f.line for f in found.findings) == _reported(STAGE_INDEX)


STAGE_INDEX_TESTS = """
    def past_first(group, data, pp_rank, pp_size):
        if pp_rank != 0:
            data = group.recv_object(src=pp_rank - 1)
        if pp_rank < pp_size - 1:
            group.send_object(data, dst=pp_rank + 1)
        return data

    def flipped(group, data, pp_rank, pp_size):
        if 1 <= pp_rank:
            data = group.recv_object(src=pp_rank - 1)
        group.send_object(data, dst=1 + pp_rank)
        return data

    def from_the_next(group, data, pp_rank, pp_size):
        if pp_rank > 0:
            data = group.recv_object(src=pp_rank + 1)
        group.send_object(data, dst=pp_rank + 1)
        return data

    def past_the_second(group, data, pp_rank, pp_size):
        if pp_rank > 1:
            data = group.recv_object(src=pp_rank - 1)
        group.send_object(data, dst=pp_rank + 1)
        return data

    def by_tp_index(group, data, tp_rank, pp_size):
        if tp_rank > 0:
            data = group.recv_object(src=tp_rank - 1)
        group.send_object(data, dst=tp_rank + 1)
        return data
"""


def test_the_later_stages_and_their_neighbours_by_the_stage_index():
    knowledge = load_presets(["torch_distributed", "sglang"])
    assert _edge_lines(STAGE_INDEX_TESTS, "past_first", knowledge) == [(3, ("pp",)), (4, ("pp",))]
    assert _edge_lines(STAGE_INDEX_TESTS, "flipped", knowledge) == [(10, ("pp",)), (11, ("pp",))]
    assert _edge_lines(STAGE_INDEX_TESTS, "from_the_next", knowledge) == []  # the peer is no stage before
    assert _edge_lines(STAGE_INDEX_TESTS, "past_the_second", knowledge) == []  # the second stage receives nothing
    assert _edge_lines(STAGE_INDEX_TESTS, "by_tp_index", knowledge) == []  # a TP index is no stage


STAGE_METHOD_TESTS = """
    def by_method(self, group, data):
        if not self.is_first_stage():
            data = group.recv_object(src=self.prev_pp_rank)
        group.send_object(data, dst=self.next_pp_rank)
        return data

    def by_pipeline_name(self, group, data):
        if not self.is_pipeline_first_stage:
            data = group.recv_object(src=self.prev_pp_rank)
        group.send_object(data, dst=self.next_pp_rank)
        return data

    def method_with_arguments(self, group, data):
        if not self.is_first_stage(ignore_virtual=False):
            data = group.recv_object(src=self.prev_pp_rank)
        group.send_object(data, dst=self.next_pp_rank)
        return data

    def by_last_stage(self, group, data):
        if not self.is_last_stage():
            data = group.recv_object(src=self.prev_pp_rank)
        group.send_object(data, dst=self.next_pp_rank)
        return data
"""


def test_the_first_stage_is_named_as_the_neighbour_exchanges_name_it():
    """The relays read a first-stage test as ``neighbours.py`` does
    (``rank_names.pipeline_end``): ``is_first_stage()`` called with no
    arguments and ``is_pipeline_first_stage`` name the first stage as
    ``is_first_pp_rank`` does; a call with arguments (which may narrow it to
    one virtual stage) and the last stage's test do not."""
    knowledge = load_presets(["torch_distributed", "sglang"])
    assert _edge_lines(STAGE_METHOD_TESTS, "by_method", knowledge) == [(3, ("pp",)), (4, ("pp",))]
    assert _edge_lines(STAGE_METHOD_TESTS, "by_pipeline_name", knowledge) == [(9, ("pp",)), (10, ("pp",))]
    assert _edge_lines(STAGE_METHOD_TESTS, "method_with_arguments", knowledge) == []
    assert _edge_lines(STAGE_METHOD_TESTS, "by_last_stage", knowledge) == []
