"""The ways a helper agrees the buffer it is handed beside a plain in-place
collective in its straight-line body (``agreedparams.agreed_in_place``).

A collective skipped where its group has one rank agrees as well as one
run: there the group has no other member to differ from::

    def reduce(self, t):
        for group in (self.cp_group, self.tp_group):       # each in turn
            if group is not None and dist.get_world_size(group=group) > 1:
                dist.all_reduce(t, group=group)            # agreed over tp_cp

A buffer the first stage agrees and the helper then relays down the
pipeline, each later stage receiving it in place from the stage before and
sending it on, holds on every stage what its peer of the first stage holds,
the same within each stage's group as on the first::

    def sync(self, t):
        if self.pp_rank == 0:
            self.reduce(t)                                 # the first stage agrees
        self.relay(t)                                      # and hands it on

    def relay(self, t):
        if self.pp_size <= 1 or self.pp_group is None:
            return
        if self.pp_rank > 0:
            dist.recv(t, group_src=self.pp_rank - 1, group=self.pp_group)
        if self.pp_rank + 1 < self.pp_size:
            dist.isend(t.clone(), group_dst=self.pp_rank + 1, group=self.pp_group)

A test that can fail where the group has several ranks, or a helper that
returns before handing the buffer on, agrees nothing.
"""

from __future__ import annotations

import ast
from typing import Optional

from ..presets import group_from_text
from ..presets.groups import GROUP_SPANS, covering_group
from .astwalk import walked
from .bindings import assigned_names
from .grouptests import single_rank_side
from .relays import compared_equal_to_zero, is_not_first_stage, names_neighbour, stage_rank
from .relays import call_argument, first_stage_only as relays_first_stage_only
from .syntax import dotted

#: what :func:`several_ranks_group` answers for a test of the loop's own group
LOOP_GROUP = "<loop>"
#: calls that answer a group's size when asked with the group
_GROUP_SIZE_CALLS = frozenset({"get_world_size", "get_group_size"})
#: ``(operator, number)`` of a size comparison that holds only where the group has several ranks
_SEVERAL_WHEN_TRUE = frozenset({(ast.Gt, 1), (ast.GtE, 2), (ast.NotEq, 1)})


def several_ranks_group(test: ast.expr, sizes=(), loop_name: Optional[str] = None,
                        group_of=group_from_text) -> Optional[str]:
    """The group that has one rank, or is not set up, wherever ``test``
    fails: ``self.tp_world_size > 1``, ``get_world_size(group=self.tp_group)
    > 1``, ``self.tp_group is not None``, a conjunction of such tests all
    of one group.  ``loop_name``: the target of a loop over groups, whose
    tests (``group is not None``, ``get_world_size(group=group) > 1``)
    answer :data:`LOOP_GROUP`.  None for any other test.  ``group_of``: the
    group a text names, as the module names its groups
    (:meth:`~cslint.analysis.scope.ModuleContext.group_word`)."""
    if type(test) is ast.BoolOp:
        if not isinstance(test.op, ast.And):
            return None
        found = {several_ranks_group(value, sizes, loop_name, group_of) for value in test.values}
        return found.pop() if len(found) == 1 and None not in found else None
    if type(test) is not ast.Compare or len(test.ops) != 1:
        return None
    left, op, right = test.left, type(test.ops[0]), test.comparators[0]
    if op is ast.IsNot and type(right) is ast.Constant and right.value is None:
        if loop_name is not None and type(left) is ast.Name and left.id == loop_name:
            return LOOP_GROUP
        if single_rank_side(test, sizes) is not False:
            return None
        return _named(group_of((dotted(left) or "").rsplit(".", 1)[-1]))
    if type(right) is not ast.Constant or (op, right.value) not in _SEVERAL_WHEN_TRUE:
        return None
    asked = _asked(left, loop_name, group_of)
    if asked is not None:
        return asked
    if single_rank_side(test, sizes) is not False:
        return None
    text = dotted(left)
    return _named(group_of(text)) if text else None


def _asked(size: ast.expr, loop_name: Optional[str], group_of=group_from_text) -> Optional[str]:
    """The group ``get_world_size(group=g)`` asks (:data:`LOOP_GROUP` for the loop's own)."""
    if type(size) is not ast.Call or (dotted(size.func) or "").rsplit(".", 1)[-1] not in _GROUP_SIZE_CALLS:
        return None
    args = [kw.value for kw in size.keywords if kw.arg == "group"] or size.args[:1]
    if not args:
        return None
    if loop_name is not None and type(args[0]) is ast.Name and args[0].id == loop_name:
        return LOOP_GROUP
    text = dotted(args[0])
    return _named(group_of(text)) if text else None


def _named(group: Optional[str]) -> Optional[str]:
    return None if group is None or group == "world" else group


def loop_over_groups(stmt: ast.For) -> Optional[str]:
    """The group spanning the groups a ``for`` loop runs over, written out
    (``for group in (self.cp_group, self.tp_group)``: ``tp_cp``); None for
    any other loop."""
    if type(stmt) is not ast.For or stmt.orelse or type(stmt.target) is not ast.Name \
            or type(stmt.iter) not in (ast.Tuple, ast.List) or not stmt.iter.elts:
        return None
    groups = set()
    for elt in stmt.iter.elts:
        text = dotted(elt)
        last = text.rsplit(".", 1)[-1] if text else ""
        group = _named(group_from_text(last)) if "group" in last.lower() else None
        if group is None:
            return None
        groups.add(group)
    return covering_group(groups, GROUP_SPANS)


def passes_group(call: ast.Call, name: str) -> bool:
    """Whether ``call`` is handed the local ``name`` as its group (``group=name``, or by position past the first)."""
    return any(type(value) is ast.Name and value.id == name
               for value in call.args[1:] + [kw.value for kw in call.keywords if kw.arg == "group"])


def first_stage_test(test: ast.expr) -> bool:
    """A test holding on ranks of the first stage alone: as the relays read
    it, or the stage index compared equal to 0 (``self.pp_rank == 0``)."""
    if relays_first_stage_only(test):
        return True
    compared = compared_equal_to_zero(test)
    return compared is not None and stage_rank(compared)


def relayed_in_place(function, params: frozenset, knowledge, is_exit) -> frozenset:
    """The parameters of ``function`` it relays down the pipeline in place:
    its straight-line body (through ``with``) receives the parameter's
    buffer from the stage before under a test of every stage but the
    first (``if pp_rank > 0: dist.recv(t, group_src=pp_rank - 1)``, a
    preset's filling receive, :attr:`Preset.p2p_filling_receives`), then
    sends it, or a copy of it, to the stage after, rebinds it nowhere and
    returns nowhere but where ``is_exit(stmt)`` says only a group of one
    rank leaves."""
    receives = knowledge.p2p_filling_receives
    if not receives:
        return frozenset()
    keywords = knowledge.p2p_peer_keywords
    statements = []
    stack = list(reversed(function.body))
    while stack:
        stmt = stack.pop()
        if type(stmt) in (ast.With, ast.AsyncWith):
            stack.extend(reversed(stmt.body))
            continue
        statements.append(stmt)
    received: set = set()
    for stmt in statements:
        if is_exit(stmt):
            continue
        if any(type(node) in (ast.Return, ast.Yield, ast.YieldFrom) for node in walked(stmt)):
            return frozenset()
        if type(stmt) is ast.If and not stmt.orelse and is_not_first_stage(stmt.test) and len(stmt.body) == 1:
            call = stmt.body[0].value if type(stmt.body[0]) is ast.Expr else None
            if type(call) is ast.Call and (dotted(call.func) or "").rsplit(".", 1)[-1] in receives \
                    and call.args and type(call.args[0]) is ast.Name and call.args[0].id in params:
                peer = call_argument(call, keywords, 1)
                if peer is not None and names_neighbour(peer, "previous"):
                    received.add(call.args[0].id)
                    continue
        params = params - set(assigned_names(stmt))
    if not received & params:
        return frozenset()
    copies: dict = {}  # local name -> the parameter every binding of it copies (None: another binding)
    sends = []
    for node in walked(function):
        if type(node) is ast.Assign:
            for target in node.targets:
                for name in (n.id for n in walked(target) if type(n) is ast.Name):
                    copied = _copied(node.value) if type(target) is ast.Name else None
                    copies[name] = copied if copies.get(name, copied) == copied else None
        elif type(node) is ast.Call and (dotted(node.func) or "").rsplit(".", 1)[-1] in knowledge.p2p_sends \
                and node.args and _copied(node.args[0]) is not None:
            peer = call_argument(node, keywords, 1)
            if peer is not None and names_neighbour(peer, "next"):
                sends.append(_copied(node.args[0]))
    sent = {name if name in params else copies.get(name) for name in sends}
    return frozenset(received & sent & params)


def _copied(value: ast.expr) -> Optional[str]:
    """``t`` of ``t.clone()`` / ``t.detach()`` / ``t``."""
    if type(value) is ast.Name:
        return value.id
    if type(value) is ast.Call and not value.args and not value.keywords \
            and type(value.func) is ast.Attribute and value.func.attr in ("clone", "detach") \
            and type(value.func.value) is ast.Name:
        return value.func.value.id
    return None
