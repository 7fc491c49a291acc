"""Pipeline relays: a value that each stage receives from the stage before it
and sends on to the stage after it, so that every stage ends up holding what
the first stage held::

    if is_first_pp_rank and tp_size * cp_size > 1:
        count = tp_cp_broadcast(count, root=0)   # the first stage agrees
    if not is_first_pp_rank:
        count = recv_object(src=prev_pp_rank)    # the other stages receive it
    if not is_last_pp_rank:
        isend_object(count, dest=next_pp_rank)   # and hand it on

The stages may be named by their index as well::

    data = (ready, failed)                       # the first stage's own
    if pp_rank > 0:
        data = recv_object(src=pp_rank - 1)
    if pp_rank + 1 < pp_size:
        send_object(data, dst=pp_rank + 1)

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
``names_neighbour_rank``, ``pipeline_end``).

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
from ..presets.rank_names import WORLD_RANK_NAMES, names_neighbour_rank, pipeline_end, rank_name_dims
from .astwalk import statement_lists, walk as fast_walk, walked
from .cfg import TEST
from .grouptests import is_size_expr
from .syntax import dotted, unparse

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
    out: dict = {}
    for stmts, index, name, assign in relay_receives(func, knowledge, callee_names):
        stmt = stmts[index]
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
        _rebuilt_edges(graph, stmts, index, name, out)
    return out


def relay_receives(func: ast.AST, knowledge, callee_names=None) -> list:
    """(block, index, name, assignment) of each relay's receive in ``func``:
    ``block[index]`` is the ``if`` of the later stages whose one assignment
    binds ``name`` to what the stage before sends, ``name`` being what the
    function sends on to the stage after.  A function with one has its
    dataflow worked out whether or not it reaches a collective
    (``facts.extract_file``): the summary walk reads no relay."""
    receives = knowledge.p2p_receives
    if not receives or (callee_names is not None and receives.isdisjoint(callee_names)):
        return []
    body = getattr(func, "body", None)
    if not isinstance(body, list):
        return []
    peer_keywords = knowledge.p2p_peer_keywords
    sends = _sends(func, knowledge.p2p_sends, peer_keywords)
    if not sends:
        return []
    found = []
    for stmts in statement_lists(body):
        for index, stmt in enumerate(stmts):
            received = _relay_receive(stmt, sends, receives, peer_keywords)
            if received is not None:
                found.append((stmts, index, *received))
    return found


def _rebuilt_edges(graph, stmts: list, index: int, wire: str, out: dict) -> None:
    """The edges into what follows ``if plan is None: plan = wire.rebuild()``
    where an earlier ``if`` of ranks of the first stage alone (``plan =
    schedule(); wire = pack(plan)``) bound ``plan`` and the relayed ``wire``
    from it, ``plan`` being None before it::

        plan = None
        if rank == 0:                       # ranks of the first stage only
            plan = schedule()
            wire = pack(plan)
        if not is_first_pp_rank:
            wire = recv_object(src=prev_pp_rank)
        if not is_last_pp_rank:
            isend_object(wire, dest=next_pp_rank)
        if plan is None:
            plan = wire.unpack()

    Each rank of a later stage rebuilds what its peer of the first stage
    holds: that peer either kept the ``plan`` it packed into the ``wire`` it
    sent, or rebuilt it from that same ``wire`` as well, so the names the
    rebuild binds are agreed over the stages (as the relayed name is).  Only
    where nothing else binds ``wire`` from the packing to the rebuild (a
    broadcast of the first stage's group would replace the packed ``wire`` of
    a packing rank that is no root, which then keeps a ``plan`` its peers of
    the later stages never see) nor the names rebuilt."""
    for at in range(index - 1, -1, -1):
        packed = _packing_arm(stmts[at], wire)
        if packed is not None:
            break
        if wire in _stored_names([stmts[at]]):
            return
    else:
        return
    for stmt in stmts[at + 1:index]:
        if _stored_names([stmt]) & (packed | {wire}):
            return
    rebuilt = None
    for stmt in stmts[index + 1:]:
        rebuilt = _rebuild(stmt, wire, packed)
        if rebuilt is not None:
            break
        if _stored_names([stmt]) & (packed | {wire}):
            return
    if rebuilt is None or not _none_before(stmts[:at], rebuilt[0]):
        return
    test, names, last = rebuilt
    value = ((STAGES,), frozenset(names), False)
    node = graph.node_of(stmt)
    if node is not None and graph.nodes[node].kind == TEST:
        for succ, label in graph.nodes[node].succs:
            if label is False:
                out[node, succ] = value
    node = graph.node_of(last)
    if node is not None:
        for succ, _label in graph.nodes[node].succs:
            out[node, succ] = value


def _packing_arm(stmt: ast.stmt, wire: str) -> Optional[frozenset]:
    """The names an ``if`` of first-stage ranks alone (no ``else``) binds
    and packs into ``wire``: its one binding of ``wire`` reads them, and
    each is bound by a plain assignment (a name or a tuple of names)."""
    if type(stmt) is not ast.If or stmt.orelse or not first_stage_only(stmt.test):
        return None
    bound: set = set()
    packing = []
    for inner in stmt.body:
        if type(inner) is not ast.Assign or len(inner.targets) != 1:
            return None
        targets = _target_names(inner.targets[0])
        if targets is None:
            return None
        if wire in targets:
            if targets != [wire]:
                return None
            packing.append(inner.value)
        bound.update(targets)
    if len(packing) != 1:
        return None
    read = {node.id for node in walked(packing[0]) if type(node) is ast.Name}
    packed = frozenset(bound & read)
    return packed or None


def _rebuild(stmt: ast.stmt, wire: str, packed: frozenset) -> Optional[tuple]:
    """(name, names, last statement) of ``if name is None:`` (no ``else``)
    whose body only binds packed names from ``wire`` (plain assignments
    reading it)."""
    if type(stmt) is not ast.If or stmt.orelse:
        return None
    test = stmt.test
    if (type(test) is not ast.Compare or len(test.ops) != 1 or type(test.ops[0]) is not ast.Is
            or type(test.left) is not ast.Name or test.left.id not in packed
            or type(test.comparators[0]) is not ast.Constant or test.comparators[0].value is not None):
        return None
    names: set = set()
    for inner in stmt.body:
        if type(inner) is not ast.Assign or len(inner.targets) != 1:
            return None
        targets = _target_names(inner.targets[0])
        if targets is None or not set(targets) <= packed or not _reads(inner.value, wire):
            return None
        names.update(targets)
    if test.left.id not in names:
        return None
    return test.left.id, names, stmt.body[-1]


def _target_names(target: ast.expr) -> Optional[list]:
    if type(target) is ast.Name:
        return [target.id]
    if type(target) is ast.Tuple and all(type(elt) is ast.Name for elt in target.elts):
        return [elt.id for elt in target.elts]
    return None


def _none_before(stmts: list, name: str) -> bool:
    """Whether the last statement of ``stmts`` binding ``name`` is ``name =
    None`` in the same block (so ranks that skip the packing arm hold None)."""
    for stmt in reversed(stmts):
        if name not in _stored_names([stmt]):
            continue
        return (type(stmt) is ast.Assign and len(stmt.targets) == 1 and type(stmt.targets[0]) is ast.Name
                and type(stmt.value) is ast.Constant and stmt.value.value is None)
    return False


def first_stage_only(test: ast.expr) -> bool:
    """Whether ``test`` holds on ranks of the first stage alone:
    ``is_first_pp_rank``, the global rank compared equal to 0 (rank 0 is on
    the first stage), a conjunction one of whose parts is such a test, or a
    disjunction all of whose parts are."""
    if type(test) is ast.BoolOp:
        parts = [first_stage_only(value) for value in test.values]
        return any(parts) if isinstance(test.op, ast.And) else all(parts)
    if _first_stage(test):
        return True
    compared = compared_equal_to_zero(test)
    return compared is not None and _last_name(compared) in WORLD_RANK_NAMES  # (world rank 0 runs the first stage)


def compared_equal_to_zero(test: ast.expr) -> Optional[ast.expr]:
    """``X`` of a test ``X == 0`` or ``0 == X`` (the integer 0), else None."""
    if type(test) is not ast.Compare or len(test.ops) != 1 or type(test.ops[0]) is not ast.Eq:
        return None
    left, right = test.left, test.comparators[0]
    if type(left) is ast.Constant:
        left, right = right, left
    return left if type(right) is ast.Constant and type(right.value) is int and right.value == 0 else None


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


def _sends(func: ast.AST, send_names: frozenset, peer_keywords: frozenset) -> dict:
    """{name: tags} of the names the function sends to the next stage
    (``isend_object(count, dest=next_pp_rank, tag=T)``, ``send(x, next_rank)``,
    through a local name bound to sends alone; a tag's text, or None where
    the call names none)."""
    senders = send_names | _send_aliases(func, send_names)
    found: dict = {}
    for node in walked(func):
        if type(node) is not ast.Call or not node.args or type(node.args[0]) is not ast.Name:
            continue
        if _last_name(node.func) not in senders:
            continue
        dest = call_argument(node, peer_keywords, 1)
        if dest is None or not names_neighbour(dest, "next"):
            continue
        tag = call_argument(node, _TAG, 2)
        found.setdefault(node.args[0].id, set()).add(unparse(tag) if tag is not None else None)
    return found


def _send_aliases(func: ast.AST, send_names: frozenset) -> frozenset:
    """The local names every binding of which is a send or a choice between
    sends (``send = dist.isend_object if overlap else dist.send_object``)."""
    sending: dict = {}
    plain: dict = {}  # id of an assignment's one target -> whether it binds a send
    for node in walked(func):
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


def call_argument(call: ast.Call, keywords: frozenset, position: int) -> Optional[ast.expr]:
    """The argument of ``call`` passed by one of ``keywords``, else the one at ``position``; None if neither."""
    for kw in call.keywords:
        if kw.arg in keywords:
            return kw.value
    return call.args[position] if len(call.args) > position else None


def _relay_receive(stmt: ast.stmt, sends: dict, receives: frozenset, peer_keywords: frozenset) -> Optional[tuple]:
    """(name, assignment) where ``stmt`` is ``if not <first stage>: name =
    <receive>(src=<previous stage>)`` (``with`` blocks around the assignment
    allowed) and the function sends ``name`` on to the next stage with the
    same tag."""
    if type(stmt) is not ast.If or stmt.orelse or not is_not_first_stage(stmt.test):
        return None
    assign = _only_statement(stmt.body)
    if type(assign) is not ast.Assign or len(assign.targets) != 1 or type(assign.targets[0]) is not ast.Name:
        return None
    call = assign.value
    if type(call) is not ast.Call:
        return None
    if _last_name(call.func) not in receives:
        return None
    src = call_argument(call, peer_keywords, 0)
    if src is None or not names_neighbour(src, "previous"):
        return None
    name = assign.targets[0].id
    tags = sends.get(name)
    if not tags:
        return None
    tag = call_argument(call, _TAG, 1)
    if tag is not None and None not in tags and unparse(tag) not in tags:
        return None
    return name, assign


def _only_statement(stmts: list) -> Optional[ast.stmt]:
    """The one statement of ``stmts``, through ``with`` blocks."""
    while len(stmts) == 1 and type(stmts[0]) in (ast.With, ast.AsyncWith):
        stmts = stmts[0].body
    return stmts[0] if len(stmts) == 1 else None


def _first_stage(test: ast.expr) -> bool:
    """A name that holds on the first stage only, read as neighbours.py reads
    it (``rank_names.pipeline_end``): ``is_first_pp_rank`` or
    ``is_first_stage`` (any receiver), also called with no arguments
    (``self.is_first_stage()``)."""
    if type(test) is ast.Call:
        if test.args or test.keywords:
            return False
        test = test.func
    text = dotted(test)
    return bool(text) and pipeline_end(text.rsplit(".", 1)[-1]) == "first"


def stage_rank(expr: ast.expr) -> bool:
    """``pp_rank`` (any receiver): this rank's index among the stages, 0 on
    the first (a test for one, ``is_first_pp_rank``, is no index)."""
    last = (dotted(expr) or "").rsplit(".", 1)[-1]
    return bool(last) and not last.lower().lstrip("_").startswith("is_") and rank_name_dims(last) == _STAGE_DIMS


#: ``index OP bound`` tests holding on every stage but the first (``pp_rank > 0``)
_PAST_FIRST = {ast.Gt: 0, ast.NotEq: 0, ast.GtE: 1}
#: the same tests written the other way round (``0 < pp_rank``)
_PAST_FIRST_FLIPPED = {ast.Lt: 0, ast.NotEq: 0, ast.LtE: 1}


def is_not_first_stage(test: ast.expr) -> bool:
    """``not is_first_pp_rank``, or the stage index compared past the first
    stage's 0 (``pp_rank > 0``, ``pp_rank != 0``, ``pp_rank >= 1``)."""
    if type(test) is ast.UnaryOp and isinstance(test.op, ast.Not):
        return _first_stage(test.operand)
    if type(test) is not ast.Compare or len(test.ops) != 1:
        return False
    left, op, right = test.left, type(test.ops[0]), test.comparators[0]
    bounds = _PAST_FIRST
    if type(left) is ast.Constant:
        left, right, bounds = right, left, _PAST_FIRST_FLIPPED
    return (op in bounds and stage_rank(left) and type(right) is ast.Constant and type(right.value) is int
            and right.value == bounds[op])


def names_neighbour(peer: ast.expr, side: str) -> bool:
    """Whether a point-to-point call's peer is the stage before this one
    (``side`` "previous") or after it ("next"): a name saying so
    (``prev_pp_rank``), or the stage index minus or plus one (``pp_rank -
    1``, ``pp_rank + 1``, ``1 + pp_rank``)."""
    if type(peer) is not ast.BinOp:
        return names_neighbour_rank(dotted(peer) or "", side)
    index, one = peer.left, peer.right
    if side == "next" and type(index) is ast.Constant:
        index, one = one, index
    return (isinstance(peer.op, ast.Sub if side == "previous" else ast.Add) and stage_rank(index)
            and type(one) is ast.Constant and type(one.value) is int and one.value == 1)


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
    return {node.id for stmt in stmts for node in walked(stmt)
            if type(node) is ast.Name and type(node.ctx) is ast.Store}


def _reads(stmt: ast.stmt, name: str) -> bool:
    return any(type(node) is ast.Name and node.id == name for node in fast_walk(stmt))
