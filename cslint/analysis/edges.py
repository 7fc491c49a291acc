"""Edges of a function's control-flow graph along which the dataflow
refines what the names hold (:class:`Refinements`, which
:class:`~cslint.analysis.dataflow.VouchedEdges` applies): the edge straight
past an ``if`` that only runs where a group has several ranks (the names
its arm assigns are agreed within that group, which has one rank there);
the ways out of a ``for`` loop (its target also holds what it held before
the loop)."""

from __future__ import annotations

import ast
from typing import Optional

from . import cfg as cfgmod
from .environment import fork
from .syntax import single_rank_edges, target_names
from .transfer import agreed_within


class Refinements:
    """{(node, successor): (kind, data)} of one function's graph: "single"
    (:func:`~cslint.analysis.syntax.single_rank_edges`), "loop"
    (:func:`loop_exit_edges`)."""

    __slots__ = ("edges",)

    def __init__(self, edges: dict):
        self.edges = edges

    @classmethod
    def find(cls, dataflow) -> Optional["Refinements"]:
        edges = {key: ("single", past) for key, past in single_rank_edges(dataflow.graph).items()}
        for key, keys in loop_exit_edges(dataflow.graph, dataflow.info).items():
            edges[key] = ("loop", keys)
        return cls(edges) if edges else None

    def out(self, dataflow, p: int, succ: int, out: dict) -> dict:
        """``out`` of node ``p`` as it reaches ``succ``."""
        found = self.edges.get((p, succ))
        if found is None:
            return out
        kind, data = found
        if kind == "loop":
            return out if dataflow.single_rank(p) else restored(data, dataflow.envs.get(p), out)
        return agreed_within(data, out, dataflow.info.ctx.atoms.collective)


def loop_exit_edges(graph, info) -> dict:
    """{(for header, successor): keys} for each edge out of a ``for``
    header other than into its body (the loop is done, or its iterable
    raised): the header binds its target anew for the body
    (``Transfer.loop_target``, strong in the dataflow), so an iteration
    reads only its own element and never what an earlier binding of the
    name held (``for i in synced:
    reqs.append(queue[i])`` after another loop over ``i``); past the loop
    the target holds its last element or, after no trip, what it held
    before, so those edges add back what reached the header.  ``keys``: the
    environment keys the target's names write (its own structure, a
    dict's keys)."""
    out = {}
    for node in graph.nodes:
        stmt = node.stmt
        if node.kind != cfgmod.LOOP or (type(stmt) is not ast.For and type(stmt) is not ast.AsyncFor):
            continue
        keys = []
        for name in target_names(stmt.target):
            keys.append(name)
            if name in info.element_stores:
                keys.append(("own", name))
            keys.extend(("key", name, key) for key in info.dict_keys.get(name, ()))
        if not keys:
            continue
        keys = tuple(keys)
        for succ, label in node.succs:
            if label is not True:
                out[node.id, succ] = keys
    return out


def restored(keys: tuple, before: Optional[dict], out: dict) -> dict:
    """``out`` of a ``for`` header on a way out of the loop: its target's
    ``keys`` also hold what they held on entry to the header (``before``)."""
    if not before:
        return out
    refined = None
    for key in keys:
        old = before.get(key)
        new = out.get(key)
        if old is None or old is new:
            continue
        if refined is None:
            refined = fork(out)
        refined[key] = old if new is None else old | new
    return out if refined is None else refined
