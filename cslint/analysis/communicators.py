"""The communicators a module makes, read from its assignment statements:
their names, the color of each split, and the text of each group's own list
of ranks (:class:`Communicators`); the names its assignments bind to a
group (:func:`group_holding_locals`); and the group fields set together from
groups of one rank list (:func:`same_rank_fields`).

A group's own list is what the group was made from (``g =
new_group(ranks)``), or, for a factory that makes one group per rank list
and hands each rank the group that holds it (``g, _ =
new_subgroups_by_enumeration(lists)``), the name bound to the one list of
``lists`` that holds this rank (``mine = next((r for r in lists if rank in
r), [])``).  Either way ``rank in <that list>`` holds exactly on the group's
members, which is what the membership rules ask (a test of it is uniform
over the group; an arm it guards runs on every member)."""

from __future__ import annotations

import ast
from typing import Optional

from ..presets import group_from_text
from ..presets.rank_names import names_world_rank
from .astwalk import statement_lists
from .bindings import local_values
from .syntax import dotted, unparse
from .vocabulary import COMM_FACTORIES, GROUP_FROM_RANKS, GROUPS_BY_ENUMERATION


#: the values a name may be bound to a group by (``group = get_tp_group()``, ``g = group``; a
#: parameter with a fallback, ``pg = cpu_group if cpu_group is not None else group``)
_GROUP_VALUE_TYPES = (ast.Name, ast.Attribute, ast.Call, ast.IfExp, ast.BoolOp)


class Communicators:
    """The communicators a module makes (``sub = comm.Split(color, key)``,
    ``g = dist.new_group(ranks)``): their names, the color of each split, and
    the text of each group's own list of ranks."""

    def __init__(self):
        self.names: set = set()
        self.colors: dict = {}  # communicator text -> color expression
        self.members: dict = {}  # group text -> text of its own list of ranks (see the module docstring)
        #: the text of every list of ranks the module makes a group from: a name rebound to
        #: the groups of several partitions in turn (``g = new_group(ranks)`` in one loop,
        #: ``g = new_group(others)`` in the next) keeps only its last list in ``members``,
        #: while a test of membership in any of them asks about a group of the module
        self.member_texts: set = set()
        #: ``(attr, value)`` of each ``self.attr = value`` of the module, in statement order (value
        #: None for an augmented assignment), kept by the same walk: read by the field tables
        #: (``ModuleContext._field_groups``, ``size_fields_of``) instead of a walk of their own
        self.field_writes: list = []
        #: ``(name, value)`` of each ``name = value`` of the module whose value is a name, an
        #: attribute or a call chain, or a choice of a name with a fallback, kept by the same walk:
        #: read for the locals that may hold a group (``ModuleContext.group_holding_locals``,
        #: ``wrappers.fallback_candidates``) instead of a walk of each function
        self.name_writes: list = []
        self._enumerated: dict = {}  # text of the rank lists -> the group text this rank's group is bound to
        self._own_lists: dict = {}  # text of the rank lists -> the name bound to the one holding this rank

    def note_fields(self, node) -> None:
        """Record the ``self.attr`` targets of an assignment statement."""
        if type(node) is ast.Assign:
            targets, value = node.targets, node.value
        elif type(node) is ast.AnnAssign:
            if node.value is None:
                return
            targets, value = (node.target,), node.value
        else:
            targets, value = (node.target,), None
        for target in targets:
            kind = type(target)
            if kind is ast.Attribute and type(target.value) is ast.Name and target.value.id == "self":
                self.field_writes.append((target.attr, value))
            elif kind is ast.Name and type(value) in _GROUP_VALUE_TYPES:
                self.name_writes.append((target.id, value))

    def note(self, node: ast.Assign) -> None:
        """Record the communicators an assignment makes, if any."""
        func = node.value.func
        last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if last in GROUPS_BY_ENUMERATION or last == "next":
            self._note_enumeration(node, last)
        if last not in COMM_FACTORIES:
            return
        for target in node.targets:
            text = dotted(target)
            if not text:
                continue
            self.names.add(text)
            if last in ("Split", "Split_type") and node.value.args:
                self.colors[text] = node.value.args[0 if last == "Split" else min(1, len(node.value.args) - 1)]
            if last in GROUP_FROM_RANKS:
                ranks = node.value.args[0] if node.value.args else next(
                    (kw.value for kw in node.value.keywords if kw.arg == "ranks"), None)
                if ranks is not None:
                    self.members[text] = listed = unparse(ranks)
                    self.member_texts.add(listed)

    def _note_enumeration(self, node: ast.Assign, last: str) -> None:
        """``g, _ = new_subgroups_by_enumeration(lists)`` and ``mine =
        next((r for r in lists if rank in r), default)``: once both are seen
        for the same ``lists``, ``mine`` is ``g``'s own list."""
        if len(node.targets) != 1 or not node.value.args:
            return
        target, lists = node.targets[0], node.value.args[0]
        if last == "next":
            listed = _list_holding_this_rank(lists)
            text = dotted(target)
            if listed is None or not text:
                return
            self._own_lists[listed] = text
        else:
            if type(target) is not ast.Tuple or not target.elts or not dotted(target.elts[0]):
                return
            listed = unparse(lists)
            self._enumerated[listed] = dotted(target.elts[0])
        group, own = self._enumerated.get(listed), self._own_lists.get(listed)
        if group is not None and own is not None:
            self.members[group] = own
            self.member_texts.add(own)


def _list_holding_this_rank(expr) -> Optional[str]:
    """The text of ``lists`` in ``(r for r in lists if rank in r)``: the one
    element of ``lists`` that holds this rank (the world rank id: the lists
    hold world ranks, so a node-local or a group's rank tested against them
    picks a wrong list, as :func:`~cslint.analysis.grouptests.tests_membership`
    asks); else None."""
    if type(expr) is not ast.GeneratorExp or len(expr.generators) != 1:
        return None
    loop = expr.generators[0]
    if type(loop.target) is not ast.Name or type(expr.elt) is not ast.Name or expr.elt.id != loop.target.id \
            or len(loop.ifs) != 1 or loop.is_async:
        return None
    test = loop.ifs[0]
    if type(test) is not ast.Compare or len(test.ops) != 1 or type(test.ops[0]) is not ast.In \
            or type(test.comparators[0]) is not ast.Name or test.comparators[0].id != loop.target.id \
            or not names_world_rank(unparse(test.left)):
        return None
    return unparse(loop.iter)


def group_holding_locals(ctx) -> frozenset:
    """The names some assignment of the file ``ctx`` holds binds to a text
    naming a group (``group = get_tp_group()``), or to another such name
    (``recv = group``): the only locals whose group a call's argument or a
    method collective's receiver is worth asking about
    (:mod:`~cslint.analysis.wrappers`).  Worked out once per file, from the
    assignments the walk collecting the imports kept."""
    found = ctx.__dict__.get("_group_holding_locals")
    if found is not None:
        return found
    names = set()
    copies = []
    built_over = None
    for name, value in ctx.name_writes:
        if type(value) is ast.Name:
            copies.append((value.id, name))
        elif name not in names:
            text = dotted(value)
            if not text:
                if registry_lookup_key(value) is not None:  # ``group = _groups[group_name]()``
                    names.add(name)
                continue
            if group_from_text(text) is not None:
                names.add(name)
            elif text.startswith("self.") and text.count(".") == 1:
                built_over = built_over_fields(ctx) if built_over is None else built_over
                if text[len("self."):] in built_over:  # ``comm = self.pynccl_comm``
                    names.add(name)
    found = ctx.__dict__["_group_holding_locals"] = with_copies(names, copies)
    return found


def attribute_bound_locals(ctx) -> frozenset:
    """The names some assignment of the file ``ctx`` holds binds to an
    attribute chain of another name than ``self`` (``cpu_group =
    group.cpu_group``): the only locals a call's argument is worth asking
    whether they hold a group the function was handed, which its callers
    name (:func:`~cslint.analysis.localgroups.call_group_arguments`).  Worked
    out once per file, from the assignments the walk collecting the imports
    kept."""
    found = ctx.__dict__.get("_attribute_bound_locals")
    if found is None:
        names = set()
        for name, value in ctx.name_writes:
            if type(value) is ast.Attribute:
                text = dotted(value)
                if text and not text.startswith("self."):
                    names.add(name)
        found = ctx.__dict__["_attribute_bound_locals"] = frozenset(names)
    return found


def param_chain_locals(info, bindings: tuple) -> frozenset:
    """The locals of the function ``info`` some assignment of which (among
    its binding nodes ``bindings``) binds them to an attribute chain of one
    of its parameters other than ``self`` (``cpu_group = group.cpu_group``):
    the only ones :func:`~cslint.analysis.localgroups.call_group_arguments`
    asks whether they hold a group the caller names.  Once per function."""
    found = info.__dict__.get("_param_chain_locals")
    if found is None:
        params = info.param_names
        names = set()
        for node in bindings:
            if type(node) is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name \
                    and type(node.value) is ast.Attribute and node.targets[0].id not in params:
                head = node.value
                while type(head) is ast.Attribute:
                    head = head.value
                if type(head) is ast.Name and head.id in params and head.id != info.self_name:
                    names.add(node.targets[0].id)
        found = info.__dict__["_param_chain_locals"] = frozenset(names)
    return found


def with_copies(names: set, copies: list) -> frozenset:
    """``names`` and every local bound from one of them through a chain of
    plain copies (``recv = group``; ``copies`` holds (source, target)
    pairs in any order)."""
    names = set(names)
    grown = True
    while grown and copies:
        grown = False
        for source, target in copies:
            if source in names and target not in names:
                names.add(target)
                grown = True
    return frozenset(names)


#: the keywords by which a communicator's constructor is handed the group it runs over
_GROUP_KEYWORDS = ("group", "process_group", "pg", "cpu_group", "device_group")


def assigned_fields(ctx) -> frozenset:
    """The attributes some ``self.attr = ...`` of the file ``ctx`` assigns,
    from the field writes the imports walk kept; once per file."""
    found = ctx.__dict__.get("_assigned_fields")
    if found is None:
        found = ctx.__dict__["_assigned_fields"] = frozenset(attr for attr, _value in ctx.field_writes)
    return found


def built_over_fields(ctx) -> dict:
    """attr -> ``self.<other>`` for each field of the file every assignment
    of which (``None`` aside) builds an object over another field of the
    same object, passed by a group keyword, the same each time
    (``self.pynccl_comm = PyNcclCommunicator(group=self.cpu_group, ...)``):
    the communicator runs over the group that field holds, so a collective
    method called on it runs there (``ModuleContext.group_of_text``).
    Worked out once per file, from the field writes the imports walk kept."""
    found = ctx.__dict__.get("_built_over_fields")
    if found is not None:
        return found
    table: dict = {}
    for attr, value in ctx.field_writes:
        if type(value) is ast.Constant and value.value is None:
            continue
        over = None
        if type(value) is ast.Call:
            for keyword in value.keywords:
                if keyword.arg in _GROUP_KEYWORDS:
                    text = dotted(keyword.value) if type(keyword.value) is ast.Attribute else None
                    if text and text.startswith("self.") and text.count(".") == 1 and text != f"self.{attr}":
                        over = text
                    break
        known = table.get(attr, over)
        table[attr] = over if known == over else ""
    found = ctx.__dict__["_built_over_fields"] = {attr: over for attr, over in table.items() if over}
    return found


def registry_lookup_key(value) -> Optional[str]:
    """``k`` of a lookup ``table[k]()`` (a weak reference called, as the
    group registries of vLLM and SGLang hold their coordinators) or
    ``table[k]`` in a module-level table by a name; None for anything else."""
    if type(value) is ast.Call and not value.args and not value.keywords:
        value = value.func
    if type(value) is ast.Subscript and type(value.value) is ast.Name and type(value.slice) is ast.Name:
        return value.slice.id
    return None


def same_rank_field(ctx, text: str) -> str:
    """``text`` of a group, a field of ``self`` holding the same ranks as
    another named by the first of them (:func:`same_rank_fields`)."""
    if not text.startswith("self.") or text.count(".") != 1:
        return text
    attr = text[len("self."):]
    return f"self.{same_rank_fields(ctx).get(attr, attr)}"


def same_rank_fields(ctx) -> dict:
    """attr -> the field (its name) that holds a group of the same ranks: two
    group fields of an object set in one block from two groups made over one
    rank list (``device_group = new_group(ranks, backend="nccl")``,
    ``cpu_group = new_group(ranks, backend="gloo")``, then ``self.device_group
    = device_group; self.cpu_group = cpu_group``) hold the same members, so a
    collective over either is over one group (:meth:`ModuleContext.group_of_text`
    names both by the first field's name).  Every write of such a field
    (``None`` aside) is one of those; worked out once per file."""
    found = ctx.__dict__.get("_same_rank_fields")
    if found is not None:
        return found
    found = {}
    members = ctx.group_members
    candidates = {attr for attr, value in ctx.field_writes if type(value) is ast.Name and value.id in members}
    if len(candidates) > 1:
        found = _fields_made_together(ctx, candidates)
    ctx.__dict__["_same_rank_fields"] = found
    return found


def _fields_made_together(ctx, candidates: set) -> dict:
    together: dict = {}  # attr -> the first field of each block it is set in beside another
    writes: dict = {}  # attr -> how many of its writes such a block makes
    for func in ast.walk(ctx.tree):
        if type(func) is not ast.FunctionDef and type(func) is not ast.AsyncFunctionDef:
            continue
        for block in statement_lists(func.body):
            cohorts: dict = {}  # rank list text -> the fields a block sets from groups made over it
            for stmt in block:
                attr = _field_set_from_name(stmt, candidates)
                if attr is not None:
                    ranks = _made_over(func, stmt.value.id)
                    if ranks is not None:
                        cohorts.setdefault(ranks, []).append(attr)
            for fields in cohorts.values():
                if len(set(fields)) < 2 or len(set(fields)) != len(fields):
                    continue
                first = min(fields)
                for attr in fields:
                    together.setdefault(attr, set()).add(first)
                    writes[attr] = writes.get(attr, 0) + 1
    made = {}
    for attr, value in ctx.field_writes:
        if not (type(value) is ast.Constant and value.value is None):
            made[attr] = made.get(attr, 0) + 1
    return {attr: next(iter(firsts)) for attr, firsts in sorted(together.items())
            if len(firsts) == 1 and writes[attr] == made.get(attr)}


def _field_set_from_name(stmt, candidates: set) -> Optional[str]:
    """``attr`` of ``self.attr = name`` (one target, a plain name), where ``attr`` is a candidate."""
    if type(stmt) is not ast.Assign or len(stmt.targets) != 1 or type(stmt.value) is not ast.Name:
        return None
    target = stmt.targets[0]
    if type(target) is ast.Attribute and type(target.value) is ast.Name and target.value.id == "self" \
            and target.attr in candidates:
        return target.attr
    return None


def _made_over(func, name: str) -> Optional[str]:
    """The text of the one rank list every binding of the local ``name`` in
    ``func`` makes a group from (``new_group(ranks, ...)``), else None."""
    values = local_values(func, name)
    texts = set()
    for value in values or ():
        if type(value) is not ast.Call or not value.args:
            return None
        func_node = value.func
        last = func_node.attr if type(func_node) is ast.Attribute else func_node.id if type(func_node) is ast.Name else ""
        if last not in GROUP_FROM_RANKS:
            return None
        texts.add(unparse(value.args[0]))
    return next(iter(texts)) if len(texts) == 1 else None
