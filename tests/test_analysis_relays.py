"""Pipeline relays (issue 14, complementary-role-arms): a count that the
first stage agrees on (a broadcast over its TP+CP group, or a group of one
rank where the size test fails) and that every later stage receives from the
stage before it and sends on to the next is the same on every rank, so a
loop over it on the ranks that did not compute it runs as often as the
computing rank's own loop.  Each shape that must stay quiet sits beside one
that must still be reported."""

import ast
import textwrap

from cslint.analysis.cfg import build_cfg
from cslint.analysis.relays import relay_edges
from cslint.api import check_source

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
                      for (node, _succ), (groups, names, entry) in relay_edges(graph, func, None).items())

    assert edges("_relay") == [(12, ("cp", "tp"), ("count",), False),  # past the first stage's broadcast
                               (15, ("pp",), ("count",), False),  # the first stage, past the receive
                               (17, ("pp",), ("count",), True)]  # out of the receive
    assert [entry[:2] for entry in edges("_relay_tp_only")] == [(23, ("tp",)), (25, ("pp",)), (26, ("pp",))]
    assert edges("_received_not_sent") == []
