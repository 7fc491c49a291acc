"""A value broadcast in two stages over two orthogonal groups (issue 14).

The leaders of one group first share a value along another group, then each
leader hands it to its own group::

    if cp_group.world_size > 1 and tp_group.rank_in_group == 0:
        data = broadcast(data, group=cp_group, src=cp_group.ranks[0])
    if tp_group.world_size > 1:
        data = broadcast(data, group=tp_group, src=tp_group.ranks[0])

The second broadcast hands out what the first rank of its group (B, here
``tp_group``) holds, and that rank took the first arm wherever the first
group (A, ``cp_group``) has several ranks: it holds what the first stage
agreed over A, or, where A has one rank, a value nothing along A can tell
apart.  So every rank of A x B gets the value of one rank, the first of
both: past the second stage the name is agreed over A and B together.  Read
one broadcast at a time, the second reads the value on every rank of B, the
ones that skipped the first arm included, and leaves it differing along A.

:func:`two_stage_edges` finds the pair: an ``if`` without ``else`` whose
only statement binds a name to a collective over A with a result alike on
A's ranks, whose test holds on B's first rank wherever A has several ranks
(an ``and`` of one test that this rank is B's first -- ``rank_in_group ==
0``, ``is_first_rank`` -- and tests of A's size), right before a statement
binding the same name to a broadcast of it over B from B's first member
(``B.ranks[0]``, ``B.first_rank``: the spec's root argument), alone or as
the only statement of an ``if`` that runs only where B has several ranks
(past which B has one rank, its first).  B and A are the group objects the
texts read (``tp_group`` in ``tp_group.cpu_group``): the same text in the
test, the group argument and the root.  The edges out of the second stage
carry the name agreed over A, then over B (:func:`agreed_twice`)."""

from __future__ import annotations

import ast
from typing import Optional

from . import cfg as cfgmod
from .callfacts import argument, payload_argument
from .grouptests import is_size_expr, single_rank_side
from .syntax import dotted
from .transfer import agreed_within
from ..presets.rank_names import FIRST_MEMBER_FIELDS, FIRST_RANK_FLAGS, GROUP_POSITIONS, MEMBER_LISTS


def two_stage_edges(dataflow) -> dict:
    """{(node, successor): (groups, names)} for the edges out of the second
    stage of a two-stage broadcast (the module's docstring): ``names``
    agreed over each of ``groups`` in turn there."""
    graph, info = dataflow.graph, dataflow.info
    out: dict = {}
    for node in graph.nodes:
        first = node.stmt
        if node.kind != cfgmod.TEST or type(first) is not ast.If or first.orelse or len(first.body) != 1:
            continue
        name = _bound_name(first.body[0])
        if name is None:
            continue
        block = info.blocks.get(id(first))
        at = next((i for i, s in enumerate(block) if s is first), None) if block else None
        if at is None or at + 1 >= len(block):
            continue
        found = _pair(dataflow, first, block[at + 1], name)
        if found is not None:
            out.update(found)
    return out


def agreed_twice(data: tuple, out: dict, collective) -> dict:
    """``out`` with ``data``'s names agreed over each of its groups in turn."""
    groups, names = data
    for group in groups:
        out = agreed_within((group, names), out, collective)
    return out


def _pair(dataflow, first: ast.If, second: ast.stmt, name: str) -> Optional[dict]:
    """The edges :func:`two_stage_edges` refines for the pair ``first``,
    ``second`` binding ``name``; None where they are not one."""
    graph = dataflow.graph
    first_group = _collective_over(dataflow, first.body[0])
    if first_group is None:
        return None
    group_a, text_a, _ = first_group
    operands = first.test.values if type(first.test) is ast.BoolOp and type(first.test.op) is ast.And \
        else [first.test]
    leaders = [text for text in (_first_rank_test(o) for o in operands) if text is not None]
    if len(leaders) != 1 or not all(_first_rank_test(o) is not None or _sizes(o, text_a) for o in operands):
        return None
    text_b = leaders[0]
    test_node = None
    stage = second
    if type(second) is ast.If:
        if second.orelse or len(second.body) != 1 or not _sizes(second.test, text_b):
            return None
        test_node, stage = graph.node_of(second), second.body[0]
    if _bound_name(stage) != name:
        return None
    second_group = _collective_over(dataflow, stage)
    if second_group is None:
        return None
    group_b, text, spec = second_group
    call = stage.value
    payload = payload_argument(call, spec)
    root = argument(call, spec.root_arg, spec.root_kw)[0] if spec.root_arg is not None or spec.root_kw else None
    if not _object_of(text, text_b) or type(payload) is not ast.Name or payload.id != name or _first_member(root) != text_b \
            or name == text_a.partition(".")[0] or name == text_b.partition(".")[0]:
        return None
    data = ((group_a, group_b), frozenset({name}))
    edges = {}
    stage_node = graph.node_of(stage)
    for succ, label in graph.nodes[stage_node].succs if stage_node is not None else ():
        if label is None:
            edges[stage_node, succ] = data
    if test_node is not None:
        for succ, label in graph.nodes[test_node].succs:
            if label is False:
                edges[test_node, succ] = data
    return edges


def _bound_name(stmt: ast.stmt) -> Optional[str]:
    """``name`` of ``name = <call>``; None for any other statement."""
    if type(stmt) is not ast.Assign or len(stmt.targets) != 1 or type(stmt.targets[0]) is not ast.Name \
            or type(stmt.value) is not ast.Call:
        return None
    return stmt.targets[0].id


def _collective_over(dataflow, stmt: ast.Assign) -> Optional[tuple]:
    """``(group, object text, spec)`` of the collective ``stmt`` assigns,
    where every rank of its group gets one value back and the call names
    its group by an argument (``tp_group.cpu_group``: the object
    ``tp_group``); None otherwise."""
    node = dataflow.graph.node_of(stmt)
    if node is None:
        return None
    for call_info in dataflow.info.node_info(dataflow.graph.nodes[node]).calls:
        match = call_info.match
        if call_info.call is not stmt.value or match is None or match.spec is None \
                or match.spec.result != "uniform":
            continue
        spec = match.spec
        group = argument(call_info.call, spec.group_arg, (spec.group_kw, "group"))[0]
        text = dotted(group) if group is not None else None
        if not text:
            return None
        return match.group, text, spec
    return None


def _object_of(text: str, member_of: str) -> bool:
    """Whether ``text`` (a group argument's) reads the group object ``member_of`` names."""
    return text == member_of or text.startswith(member_of + ".")


def _sizes(test: ast.expr, group_text: str) -> bool:
    """Whether ``test`` holds only where the group read from ``group_text``
    has several ranks, by a test of that group object's size."""
    if type(test) is not ast.Compare or single_rank_side(test) is not False:
        return False
    size = test.left if is_size_expr(test.left) else test.comparators[0]
    text = dotted(size.func if type(size) is ast.Call else size)
    receiver = text.rpartition(".")[0] if text else ""
    return bool(receiver) and _object_of(group_text, receiver)


def _first_rank_test(test: ast.expr) -> Optional[str]:
    """The text of the group object whose first rank ``test`` says this
    rank is (``g.is_first_rank``, ``g.rank_in_group == 0``); None otherwise."""
    if type(test) is ast.Attribute and test.attr in FIRST_RANK_FLAGS:
        return dotted(test.value) or None
    if type(test) is not ast.Compare or len(test.ops) != 1 or type(test.ops[0]) is not ast.Eq:
        return None
    left, right = test.left, test.comparators[0]
    if type(left) is ast.Constant:
        left, right = right, left
    if type(left) is not ast.Attribute or left.attr not in GROUP_POSITIONS:
        return None
    if type(right) is ast.Constant and right.value == 0 and type(right.value) is int:
        return dotted(left.value) or None
    return None


def _first_member(node) -> Optional[str]:
    """The text of the group object whose first member ``node`` names
    (``g.ranks[0]``, ``g.first_rank``); None otherwise."""
    if type(node) is ast.Attribute and node.attr in FIRST_MEMBER_FIELDS:
        return dotted(node.value) or None
    if type(node) is ast.Subscript and type(node.value) is ast.Attribute and node.value.attr in MEMBER_LISTS \
            and type(node.slice) is ast.Constant and node.slice.value == 0 and type(node.slice.value) is int:
        return dotted(node.value.value) or None
    return None
