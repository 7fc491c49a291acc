"""The root of a broadcast holds what it sends: on the rank a broadcast names
as its root, the payload it passed is what every rank of the group gets back
(``Distributed.broadcast(obj, root=0)``, mpi4py's ``bcast``; the spec names the
root's argument, ``CollectiveSpec.root_arg``/``root_kw``).  A rank knows it is
the root where the statement runs only on one side of a test of its rank
against the same constant (``if dist.rank == 0: dist.broadcast(name, 0)``):
there the payload name is agreed over the group from the broadcast on, as a
buffer a collective writes in place is.  Anywhere else the payload stays the
rank's own (a non-root rank that passes a name keeps what it held)."""

from __future__ import annotations

import ast
from typing import Optional

from ..presets import KIND_RANK_ID
from . import cfg as cfgmod
from .callfacts import argument, payload_argument


def root_constant(call: ast.Call, spec) -> Optional[object]:
    """The constant ``call`` names as the broadcast's root (None: no root
    argument the spec knows, or not a constant)."""
    if spec.root_arg is None:
        return None
    node = argument(call, spec.root_arg, spec.root_kw)[0]
    if type(node) is ast.Constant and type(node.value) is int:
        return node.value
    return None


def payload_name(call: ast.Call, spec) -> Optional[str]:
    """The plain name ``call`` passes as its payload, else None."""
    node = payload_argument(call, spec)
    return node.id if type(node) is ast.Name else None


def rank_tested(dataflow, n: int, env: dict) -> frozenset:
    """The constants ``K`` node ``n`` runs only where this rank equals: the
    true side of ``<rank> == K`` (or the false side of ``<rank> != K``), an
    ``if`` deciding it, whose other operand holds a rank id."""
    graph, evaluator = dataflow.graph, dataflow.evaluator
    out = []
    for d, label in dataflow.closures.get(n, ()):
        node = graph.nodes[d]
        if node.kind != cfgmod.TEST or type(node.stmt) is not ast.If:
            continue
        test = node.stmt.test
        if type(test) is not ast.Compare or len(test.ops) != 1:
            continue
        op = type(test.ops[0])
        if not ((op is ast.Eq and label is True) or (op is ast.NotEq and label is False)):
            continue
        left, right = test.left, test.comparators[0]
        if type(left) is ast.Constant:
            left, right = right, left
        if type(right) is not ast.Constant or type(right.value) is not int:
            continue
        if any(a.tag == "S" and a.kind == KIND_RANK_ID for a in evaluator.eval(left, env)):
            out.append(right.value)
    return frozenset(out)
