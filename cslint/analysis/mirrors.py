"""The root's own copy of what it broadcast: on the rank an object broadcast
names as its root, the value it put into the payload list has what every
rank of the group got back::

    objects = [None]
    if dist.get_rank(group) == 0:
        objects[0] = tree_map_only(torch.Tensor, to_placeholder, state)   # or: objects[0] = state
    dist.broadcast_object_list(objects, src=0, group=group)
    if dist.get_rank(group) == 0:
        return state            # the root's own: here `state` mirrors objects[0]
    return objects[0]

Past the broadcast, on the edge into an arm of a later test of the same
rank against the same root, the name the root stored into the payload is
agreed over the broadcast's group: all of it where the root stored the name
itself (the others got a copy of that very object), its containers -- size,
keys, None-ness -- where it stored a structure-preserving map of it (a
preset's ``structure_maps``, torch's ``tree_map_only``): the leaves the map
replaced (tensors by placeholders) still differ, in contents and in kind
(:data:`~cslint.analysis.atoms.KINDS_ONLY`, from the rank test), so a type
test of one is still this rank's own.

The four statements are of one statement list, in that order, the store a
statement of the first test's arm; after the store, neither the name nor the
payload list is mentioned again before the later test (but by the broadcast
itself), so neither is rebound or changed in place; both tests are the same
comparison of a rank with the broadcast's constant root (``==`` and its arm,
or ``!=`` and its ``else``), no name they read bound between them, and what
they compare holds a rank id where the edge is read."""

from __future__ import annotations

import ast
from typing import NamedTuple, Optional

from ..presets import KIND_RANK_ID
from . import cfg as cfgmod
from .astwalk import statement_lists, walked
from .atoms import EMPTY, KINDS_ONLY
from .roots import payload_name, root_constant
from .scope import canonical_text
from .grouptests import int_equality
from .syntax import dotted


class Mirror(NamedTuple):
    name: str  # what the root stored into the payload list
    group: str  # the broadcast's group
    mapped: bool  # stored through a structure-preserving map, not as it is
    compared: ast.expr  # the rank side of the later test


def mirror_edges(dataflow) -> dict:
    """{(later test node, successor): :class:`Mirror`} of the function."""
    info = dataflow.info
    broadcasts = {}
    tests = {}
    for node in dataflow.graph.nodes:
        stmt = node.stmt
        if node.kind == cfgmod.TEST:
            tests.setdefault(id(stmt), node)
        elif node.kind == cfgmod.STMT and type(stmt) is ast.Expr and type(stmt.value) is ast.Call:
            for call_info in info.node_info(node).calls:
                broadcast = _object_broadcast(call_info)
                if broadcast is not None:
                    broadcasts[id(stmt)] = broadcast
    body = getattr(info.func, "body", None)
    if not broadcasts or not isinstance(body, list):
        return {}
    out: dict = {}
    for stmts in statement_lists(body):
        for index, stmt in enumerate(stmts):
            broadcast = broadcasts.get(id(stmt))
            if broadcast is not None:
                _find(dataflow, stmts, index, broadcast, tests, out)
    return out


def _object_broadcast(call_info) -> Optional[tuple]:
    """(payload name, root, group) of a broadcast with a constant root that
    writes its payload list in place (``broadcast_object_list(objects, src=0)``)."""
    match = call_info.match
    spec = match.spec if match is not None else None
    if spec is None or spec.root_arg is None:
        return None
    call = call_info.call
    name = payload_name(call, spec)
    if name is None or not any(index < len(call.args) and type(call.args[index]) is ast.Name
                               and call.args[index].id == name for index in spec.inplace):
        return None
    root = root_constant(call, spec)
    return None if root is None else (name, root, match.group)


def _rank_side(test: ast.expr, root) -> Optional[tuple]:
    """(the compared side, the label of the edge where it equals ``root``) of
    ``<x> == root`` or ``<x> != root``."""
    found = int_equality(test)
    if found is None or found[1] != root:
        return None
    return found[0], found[2]


def _stored(stmt: ast.stmt, payload: str, maps: dict, imports: dict) -> Optional[tuple]:
    """(name, mapped) of ``payload[i] = value`` or ``payload = [value]``, the
    value a name or a structure-preserving map of one."""
    if type(stmt) is not ast.Assign or len(stmt.targets) != 1:
        return None
    target, value = stmt.targets[0], stmt.value
    if type(target) is ast.Subscript and type(target.value) is ast.Name and target.value.id == payload \
            and type(target.slice) is ast.Constant and type(target.slice.value) is int:
        pass
    elif type(target) is ast.Name and target.id == payload and type(value) is ast.List and len(value.elts) == 1:
        value = value.elts[0]
    else:
        return None
    if type(value) is ast.Name:
        return value.id, False
    if type(value) is ast.Call and not value.keywords:
        position = maps.get(canonical_text(dotted(value.func), imports))
        if position is not None and position < len(value.args) and type(value.args[position]) is ast.Name \
                and not any(type(a) is ast.Starred for a in value.args):
            return value.args[position].id, True
    return None


def _mentions(nodes, names: tuple) -> bool:
    return any(type(sub) is ast.Name and sub.id in names for node in nodes for sub in walked(node))


def _binds(nodes, names: set) -> bool:
    return any(type(sub) is ast.Name and type(sub.ctx) is not ast.Load and sub.id in names
               for node in nodes for sub in walked(node))


def _find(dataflow, stmts: list, index: int, broadcast: tuple, tests: dict, out: dict) -> None:
    payload, root, group = broadcast
    info = dataflow.info
    maps = info.ctx.knowledge.structure_maps
    imports = info.ctx.imports
    for first in range(index - 1, -1, -1):
        earlier = stmts[first]
        if type(earlier) is not ast.If:
            continue
        side = _rank_side(earlier.test, root)
        if side is None:
            continue
        arm = earlier.body if side[1] else earlier.orelse
        for position, stmt in enumerate(arm):
            stored = _stored(stmt, payload, maps, imports)
            if stored is None:
                continue
            name, mapped = stored
            watched = (name, payload)
            if _mentions(arm[position + 1:], watched) or _mentions(stmts[first + 1:index], watched):
                return
            for later_index in range(index + 1, len(stmts)):
                later = stmts[later_index]
                if type(later) is ast.If and ast.dump(later.test) == ast.dump(earlier.test):
                    if _binds(stmts[first:later_index], {n.id for n in walked(earlier.test) if type(n) is ast.Name}):
                        return  # the test may read another rank or group the second time
                    node = tests.get(id(later))
                    if node is not None:
                        for succ, label in node.succs:
                            if label is side[1]:
                                out[node.id, succ] = Mirror(name, group, mapped, side[0])
                    return
                if _mentions([later], (name,)):
                    return
            return
        return


def mirrored(mirror: Mirror, out: dict, dataflow) -> dict:
    """``out`` on the edge into the root's arm: the stored name agreed over
    the group, its leaves' kinds and contents left to the rank test where a
    map made the payload (:data:`~cslint.analysis.atoms.KINDS_ONLY`)."""
    evaluator = dataflow.evaluator
    compared = [a for a in evaluator.eval(mirror.compared, out) if a.tag == "S" and a.kind == KIND_RANK_ID]
    if not compared:
        return out
    collective = dataflow.info.ctx.atoms.collective
    leaves = frozenset(tuple.__new__(type(a), a[:6] + (KINDS_ONLY,) + a[7:]) for a in compared) if mirror.mapped else EMPTY
    name = mirror.name
    return {key: collective(mirror.group, atoms) | leaves if (key if type(key) is str else key[1]) == name
            else atoms for key, atoms in out.items()}
