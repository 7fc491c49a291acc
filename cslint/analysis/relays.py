"""Pipeline relays: a value that each stage receives from the stage before it
and sends on to the stage after it, so that every stage ends up holding what
the first stage held::

    if is_first_pp_rank and tp_size * cp_size > 1:
        count = tp_cp_broadcast(count, root=0)   # the first stage agrees
    if not is_first_pp_rank:
        count = recv_object(src=prev_pp_rank)    # the other stages receive it
    if not is_last_pp_rank:
        isend_object(count, dest=next_pp_rank)   # and hand it on

Point-to-point calls are no collectives, so without this the dataflow reads
the received value as a new one and the test choosing between the first
stage's value and the received one as a rank-local choice.  A relay makes the
name the same along the pipeline: past the receive, and on the first stage's
way past it, the name holds the first stage's value agreed over the stages
(:func:`relay_edges`, applied by :class:`~cslint.analysis.edges.Refinements`).

What is a receive handing back what it received and what is a send is the
loaded presets' knowledge (``Knowledge.p2p_receives``, ``p2p_sends``, and
the keywords naming the peer, ``p2p_peer_keywords``: ``dest=``, ``dst=``); which
peer is the stage before or after this one, and which name tests for the
first stage, the presets' rank words (``presets.rank_names``:
``names_neighbour_rank``, ``first_rank_dims``).

The first stage's own value is agreed where an ``if`` of the first stage
before the receive assigns the name (a collective over the stage's group);
the way past that ``if`` either leaves the first stage with a group of one
rank (the size test fails: ``tp_size * cp_size > 1`` false means one TP and
one CP rank) or is a later stage's, whose value the receive replaces before
anything reads it.
"""

from __future__ import annotations

import ast
from typing import Optional

from ..presets import group_from_text
from ..presets.rank_names import first_rank_dims, names_neighbour_rank
from .astwalk import BLOCKS_OF, walk as fast_walk
from .cfg import TEST
from .syntax import dotted, is_size_expr, unparse

#: the group along which a relay makes a name agreed: the pipeline's stages
STAGES = "pp"
#: what the way past a first stage's ``if`` holds on the later stages, whose
#: receive replaces it before any read: nothing that can differ
DEAD = "world"
_STAGE_DIMS = frozenset({STAGES})
_TAG = frozenset({"tag"})


def relay_edges(graph, func: ast.AST, knowledge, callee_names=None) -> dict:
    """{(node, successor): (groups, names, with_entry)} for the pipeline
    relays of ``func`` (see the module): the edge past the receive's ``if``
    on the first stage and the edges out of the receive itself (those also
    read what the name held on entry, the first stage's value the receive
    hands on: ``with_entry``) make the name agreed over the stages; the
    edge straight past an earlier ``if`` of the first stage that assigns
    only the relayed name makes it agreed within the group its size test
    names (the group has one rank there), or over every rank where there is
    no size test (only the later stages take that way, and they receive
    anew).  ``knowledge``: the loaded presets, which say what is a
    point-to-point receive or send; ``callee_names``: the last name of every
    callee of ``func``, where known (a function that calls no receive has no
    relay)."""
    receives = knowledge.p2p_receives
    if not receives or (callee_names is not None and receives.isdisjoint(callee_names)):
        return {}
    body = getattr(func, "body", None)
    if not isinstance(body, list):
        return {}
    peer_keywords = knowledge.p2p_peer_keywords
    sends = _sends(func, knowledge.p2p_sends, peer_keywords)
    if not sends:
        return {}
    out: dict = {}
    for stmts in _blocks(body):
        for index, stmt in enumerate(stmts):
            received = _relay_receive(stmt, sends, receives, peer_keywords)
            if received is None:
                continue
            name, assign = received
            names = frozenset({name})
            _edges_past(graph, stmt, (STAGES,), names, out)
            node = graph.node_of(assign)
            if node is not None:
                for succ, _label in graph.nodes[node].succs:
                    out[node, succ] = ((STAGES,), names, True)
            for earlier in reversed(stmts[:index]):
                groups = _first_stage_arm(earlier, name)
                if groups is None:
                    if _reads(earlier, name):
                        break
                    continue
                _edges_past(graph, earlier, groups, names, out)
                break
    return out


def _edges_past(graph, stmt: ast.If, groups: tuple, names: frozenset, out: dict) -> None:
    node = graph.node_of(stmt)
    if node is None or graph.nodes[node].kind != TEST:
        return
    labels: dict = {}
    for succ, label in graph.nodes[node].succs:
        labels.setdefault(succ, set()).add(label)
    for succ, seen in labels.items():
        if seen == {False}:
            out[node, succ] = (groups, names, False)


def _blocks(body: list):
    """Every statement list of the function, nested functions and classes left out."""
    stack = [body]
    while stack:
        stmts = stack.pop()
        yield stmts
        for stmt in stmts:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            for field in BLOCKS_OF[type(stmt)]:  # a handler or a case is walked like a statement
                inner = getattr(stmt, field, None)
                if inner:
                    stack.append(inner)


def _sends(func: ast.AST, send_names: frozenset, peer_keywords: frozenset) -> dict:
    """{name: tags} of the names the function sends to the next stage
    (``isend_object(count, dest=next_pp_rank, tag=T)``, ``send(x, next_rank)``,
    through a local name bound to sends alone; a tag's text, or None where
    the call names none)."""
    senders = send_names | _send_aliases(func, send_names)
    found: dict = {}
    for node in fast_walk(func):
        if type(node) is not ast.Call or not node.args or type(node.args[0]) is not ast.Name:
            continue
        if _last_name(node.func) not in senders:
            continue
        dest = _argument(node, peer_keywords, 1)
        if dest is None or not names_neighbour_rank(dotted(dest) or "", "next"):
            continue
        tag = _argument(node, _TAG, 2)
        found.setdefault(node.args[0].id, set()).add(unparse(tag) if tag is not None else None)
    return found


def _send_aliases(func: ast.AST, send_names: frozenset) -> frozenset:
    """The local names every binding of which is a send or a choice between
    sends (``send = dist.isend_object if overlap else dist.send_object``)."""
    sending: dict = {}
    plain: dict = {}  # id of an assignment's one target -> whether it binds a send
    for node in fast_walk(func):
        if type(node) is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name:
            plain[id(node.targets[0])] = _is_send(node.value, send_names)
        elif type(node) is ast.Name and type(node.ctx) is ast.Store:
            sending[node.id] = sending.get(node.id, True) and plain.get(id(node), False)
    return frozenset(name for name, only_sends in sending.items() if only_sends)


def _is_send(expr: ast.expr, send_names: frozenset) -> bool:
    if type(expr) is ast.IfExp:
        return _is_send(expr.body, send_names) and _is_send(expr.orelse, send_names)
    return type(expr) in (ast.Name, ast.Attribute) and _last_name(expr) in send_names


def _last_name(expr: ast.expr) -> str:
    return (dotted(expr) or "").rsplit(".", 1)[-1]


def _argument(call: ast.Call, keywords: frozenset, position: int) -> Optional[ast.expr]:
    for kw in call.keywords:
        if kw.arg in keywords:
            return kw.value
    return call.args[position] if len(call.args) > position else None


def _relay_receive(stmt: ast.stmt, sends: dict, receives: frozenset, peer_keywords: frozenset) -> Optional[tuple]:
    """(name, assignment) where ``stmt`` is ``if not <first stage>: name =
    <receive>(src=<previous stage>)`` (``with`` blocks around the assignment
    allowed) and the function sends ``name`` on to the next stage with the
    same tag."""
    if type(stmt) is not ast.If or stmt.orelse or not _is_not_first_stage(stmt.test):
        return None
    assign = _only_statement(stmt.body)
    if type(assign) is not ast.Assign or len(assign.targets) != 1 or type(assign.targets[0]) is not ast.Name:
        return None
    call = assign.value
    if type(call) is not ast.Call:
        return None
    if _last_name(call.func) not in receives:
        return None
    src = _argument(call, peer_keywords, 0)
    if src is None or not names_neighbour_rank(dotted(src) or "", "previous"):
        return None
    name = assign.targets[0].id
    tags = sends.get(name)
    if not tags:
        return None
    tag = _argument(call, _TAG, 1)
    if tag is not None and None not in tags and unparse(tag) not in tags:
        return None
    return name, assign


def _only_statement(stmts: list) -> Optional[ast.stmt]:
    """The one statement of ``stmts``, through ``with`` blocks."""
    while len(stmts) == 1 and type(stmts[0]) in (ast.With, ast.AsyncWith):
        stmts = stmts[0].body
    return stmts[0] if len(stmts) == 1 else None


def _first_stage(test: ast.expr) -> bool:
    """``is_first_pp_rank`` (any receiver): a name that holds on the first stage only."""
    text = dotted(test)
    return bool(text) and first_rank_dims(text.rsplit(".", 1)[-1]) == _STAGE_DIMS


def _is_not_first_stage(test: ast.expr) -> bool:
    return type(test) is ast.UnaryOp and isinstance(test.op, ast.Not) and _first_stage(test.operand)


def _first_stage_arm(stmt: ast.stmt, name: str) -> Optional[tuple]:
    """The groups within which the way past ``stmt`` leaves ``name`` agreed
    on the first stage, where ``stmt`` is an ``if`` of the first stage with
    no ``else`` that assigns ``name`` alone: ``if is_first_pp_rank:`` (only
    later stages pass it by: :data:`DEAD`), ``if is_first_pp_rank and
    tp_size * cp_size > 1:`` (the groups of the sizes, each of one rank
    there)."""
    if type(stmt) is not ast.If or stmt.orelse:
        return None
    if _stored_names(stmt.body) != {name}:
        return None
    test = stmt.test
    if _first_stage(test):
        return (DEAD,)
    if type(test) is not ast.BoolOp or not isinstance(test.op, ast.And) or len(test.values) != 2:
        return None
    first, sized = test.values
    if not _first_stage(first):
        first, sized = sized, first
    if not _first_stage(first):
        return None
    return _several_ranks(sized)


def _several_ranks(test: ast.expr) -> Optional[tuple]:
    """The groups of ``size > 1`` (``1 < size``), the size a group's or a
    product of groups' (``tp_size * cp_size``): where the test fails, each
    of them has one rank."""
    if type(test) is not ast.Compare or len(test.ops) != 1:
        return None
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if type(op) is ast.Lt:
        left, right = right, left
    elif type(op) is not ast.Gt:
        return None
    if type(right) is not ast.Constant or right.value != 1:
        return None
    factors = []
    while type(left) is ast.BinOp and isinstance(left.op, ast.Mult):
        factors.append(left.right)
        left = left.left
    factors.append(left)
    groups = []
    for factor in factors:
        text = dotted(factor) if is_size_expr(factor) else None
        group = group_from_text(text) if text else None
        if group is None or group == "world":
            return None
        groups.append(group)
    return tuple(sorted(set(groups)))


def _stored_names(stmts: list) -> set:
    """The names the statements bind, ``with`` blocks and nested arms included."""
    return {node.id for stmt in stmts for node in fast_walk(stmt)
            if type(node) is ast.Name and type(node.ctx) is ast.Store}


def _reads(stmt: ast.stmt, name: str) -> bool:
    return any(type(node) is ast.Name and node.id == name for node in fast_walk(stmt))
