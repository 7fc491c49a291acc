"""The group a call's communicator argument holds, through what the function binds: a local every binding of
which names one group (``local_group``), a parameter with a fallback (``param_with_fallback``), what a registry
lookup, an attribute chain or an unpacked tuple hands back, the receiver of a group coordinator's method
(``receiver_group``), and the group arguments of any call as the callee's parameters will read them
(``call_group_arguments``); with the statements that bind a name (``binding_nodes``) and the loops around them."""

from __future__ import annotations

import ast
from typing import Optional

from ..presets import GROUP_SPANS, covering_group, group_from_text
from .astwalk import CHILDREN, DEFINITIONS, LOOPS, own_nodes, param_names, walked
from .communicators import (assigned_fields, attribute_bound_locals, group_holding_locals, param_chain_locals,
                             registry_lookup_key, with_copies)
from .fallbacks import fallback_candidates, param_fallbacks
from .namedgroups import name_tested_group
from .shapes import returns_one_tuple_shape
from .syntax import dotted, unparse


def receiver_group(info, call: ast.Call) -> Optional[str]:
    """The group of the object a group-coordinator method collective is
    called on (``recv_group.all_gather(t)``, ``self.all_reduce(t)`` inside
    the coordinator, :func:`~cslint.analysis.collectivegroups.runs_over_receiver`):
    a parameter the function never rebinds (its ``self`` included, where
    the method is no field the file assigns: ``self.all_reduce =
    dist.all_reduce`` is the library's own) is the group the caller names
    there (``group:<parameter>``, :func:`~cslint.analysis.program.bound_group`,
    as for a collective over ``self.device_group``); a local, the group it
    holds (:func:`local_group`); None for anything else."""
    receiver = call.func.value.id
    ctx = info.ctx
    if receiver == info.self_name:
        return None if call.func.attr in assigned_fields(ctx) else f"group:{receiver}"
    if receiver in info.params:
        rebound = any(type(node) is ast.Name and node.id == receiver for node in _binding_nodes(ctx, info.func)[1])
        return None if rebound else f"group:{receiver}"  # (``g = g or default()``: not what the caller passes)
    return local_group(info, receiver) if receiver in group_holding_locals(ctx) else None


def local_group(info, name: str, at: Optional[tuple] = None) -> Optional[str]:
    """The group a local name of the function holds where every binding of
    it names one: a loop over groups written out (``for g in (self.cp_group,
    self.tp_group)``: the group spanning them all, ``tp_cp``, as a collective
    over ``g`` runs over each in turn) or an assignment (``g = self.tp_group``);
    None where the name is a parameter (bound at each call), some binding is
    anything else or names no group.  ``at``: the (line, column) of a read;
    only the bindings that can reach it count (one after it, or the
    assignment whose value holds it, reaches it only round a loop holding
    both): ``comm = tp_group.ca_comm; if ...: comm = Comm(comm.group)``
    reads ``comm.group`` of the coordinator's communicator.  Worked out once
    per function, name and read."""
    memo = info.__dict__.setdefault("_local_groups", {})
    key = name if at is None else (name, at)
    if key in memo:
        return memo[key]
    memo[key] = None
    found = _bound_group(info.ctx, info.func, info.param_names, name, 0, at)
    memo[key] = found
    return found


def call_group_arguments(info, call: ast.Call) -> tuple:
    """The texts of the arguments of ``call`` that may be process groups
    (``ModuleContext.group_arguments``), a local of the function (not a
    parameter: bound at each call), or an attribute of one, that names no
    group itself but whose local holds one where the call reads it
    (:func:`local_group`) passed as that group's name: ``comm =
    get_tp_group().ca_comm; Comm(comm.group)`` passes ``tp``, as a
    collective of the function over ``comm.group`` reads it, and so does
    ``group = get_tp_group(); gather(params, group)``.  Only a name the
    file binds to a group somewhere (:func:`~cslint.analysis.communicators.group_holding_locals`)
    and the function does (:func:`_group_holding_names`) is asked about,
    and a receiver is passed as written: asking about every local a call
    is handed would walk nearly every function again."""
    passed = info.ctx.group_arguments(call)
    if not passed:
        return passed
    out = None
    named = info.ctx.knowledge.group_names
    for index, (key, text) in enumerate(passed):
        head, dot, rest = text.partition(".")
        if named and key != "self" and group_from_text(text) is None:
            group = name_tested_group(info, call, text)
            if group is not None:  # ``Impl(group=self.cpu_group)`` where the object's name says ``tp``
                out = out or list(passed)
                out[index] = (key, group)
                continue
        if key != "self" and group_from_text(text) is None:
            param = param_with_fallback(info, head)
            if param is not None:
                out = out or list(passed)
                out[index] = (key, f"{param}{dot}{rest}")
                continue
            handed = _handed_group(info, head, call)
            if handed is not None:  # ``cpu_group = group.cpu_group``: what the caller passes for ``group``
                out = out or list(passed)
                out[index] = (key, f"{handed}{dot}{rest}")
                continue
        if head not in info.local_names or head in info.params or head == info.self_name \
                or head not in group_holding_locals(info.ctx) or group_from_text(text) is not None:
            continue
        if not dot:
            name_key = _registry_key(info, head)
            if name_key is not None:  # ``group = _groups[group_name]()``: the group the caller's name names
                out = out or list(passed)
                out[index] = (key, name_key)
                continue
        if key == "self" or head not in _group_holding_names(info):
            continue
        group = local_group(info, head, (call.lineno, call.col_offset))
        if group is not None and group_from_text(group) == group:
            out = out or list(passed)
            out[index] = (key, group)
    return passed if out is None else tuple(out)


def _handed_group(info, name: str, call: ast.Call) -> Optional[str]:
    """The text, from one of the function's parameters, of the group the
    local ``name`` holds, where every binding of it is the same attribute
    chain of a parameter the function never rebinds (``cpu_group =
    group.cpu_group``: ``group.cpu_group``, :func:`_bound_group`); None
    otherwise.  Only a name the file binds to an attribute chain somewhere,
    and the function to one of a parameter, is asked about
    (:func:`~cslint.analysis.communicators.attribute_bound_locals`, ``param_chain_locals``)."""
    if name not in attribute_bound_locals(info.ctx) \
            or name not in param_chain_locals(info, _binding_nodes(info.ctx, info.func)[1]):
        return None
    held = local_group(info, name)  # (every binding of it: once per function and name)
    if held is None or not held.startswith("group:"):
        return None
    text = held[len("group:"):]
    head = text.partition(".")[0]
    if head == info.self_name or head not in info.param_names:
        return None
    return text


def _registry_key(info, name: str) -> Optional[str]:
    """The parameter every binding of the local ``name`` looks a group up
    by, in a registry of the module (``group = _groups[group_name]()``, the
    coordinators a custom op finds by the unique name its caller passes):
    passed on as that parameter's text, so the group is what the caller
    names there (:func:`~cslint.analysis.program.bound_group`); None
    where some binding is anything else."""
    keys = set()
    bindings = _binding_nodes(info.ctx, info.func)[1]
    for node in bindings:
        kind = type(node)
        if kind is ast.Assign:
            if any(type(t) is ast.Name and t.id == name for t in node.targets):
                keys.add(registry_lookup_key(node.value) if len(node.targets) == 1 else None)
        elif kind is not ast.Name and kind is not ast.Global and kind is not ast.Nonlocal:
            if name in {n.id for n in walked(node.target) if type(n) is ast.Name}:
                return None  # a loop or comprehension target
        elif kind is not ast.Name and name in node.names:
            return None
    stores = sum(1 for node in bindings if type(node) is ast.Name and node.id == name)
    if len(keys) != 1 or None in keys or stores != 1:
        return None
    key = next(iter(keys))
    return key if key in info.params else None


def param_with_fallback(info, name: str) -> Optional[str]:
    """The parameter a local of the function is bound to with a fallback
    where it is None (:mod:`~cslint.analysis.fallbacks`): a collective over
    the local runs over what a call passes for that parameter.  Only a name
    the file binds so somewhere is asked about, from the function's binding
    statements found once (:func:`_binding_nodes`)."""
    if name not in fallback_candidates(info.ctx):
        return None
    found = info.__dict__.get("_param_fallbacks")
    if found is None:
        found = info.__dict__["_param_fallbacks"] = param_fallbacks(info, _binding_nodes(info.ctx, info.func)[1])
    return found.get(name)


def _group_holding_names(info) -> frozenset:
    """The locals of the function some assignment of which names a group
    by its text (``comm = get_tp_group().ca_comm``), or binds another such
    local (``recv = comm``): the only ones :func:`call_group_arguments`
    asks :func:`local_group` about.  Once per function."""
    found = info.__dict__.get("_group_holding_names")
    if found is None:
        params = info.param_names
        names = set()
        copies = []  # ``g = group``: a local bound from another local
        body = info.func.body
        stack = list(body) if type(body) is list else [body]
        table = CHILDREN
        while stack:  # (own_nodes' walk written out: no generator resumed per node)
            node = stack.pop()
            kind = type(node)
            if kind in DEFINITIONS:
                continue
            read = table[kind]
            if read is not None:
                stack += read(node)
            if kind is ast.Assign and isinstance(node.value, (ast.Name, ast.Attribute, ast.Call)):
                targets = [t.id for t in node.targets if type(t) is ast.Name and t.id not in params]
                if type(node.value) is ast.Name:
                    copies.extend((node.value.id, t) for t in targets)
                    continue
                text = dotted(node.value)
                if text and group_from_text(text) is not None:
                    names.update(targets)
        found = info.__dict__["_group_holding_names"] = with_copies(names, copies)
    return found


#: How many helpers deep an unpacked group is followed (``device, group =
#: _device_and_group()`` whose ``group`` is itself unpacked from another).
_UNPACK_DEPTH = 2


def _bound_group(ctx, func, params, name: str, depth: int, at: Optional[tuple] = None) -> Optional[str]:
    """:func:`local_group` over a function node; a name unpacked from a
    call of a module-level function of the file each of whose returns
    writes out a tuple of one length (``device, group = _get_group()``)
    names the group every return names at its position."""
    if name in params:
        return None
    texts: list = []
    known = stores = 0
    loop_nodes, binding_nodes = _binding_nodes(ctx, func)
    loops = _loops_around(loop_nodes, at) if at is not None else ()
    unreached: set = set()  # the targets of assignments that cannot reach ``at``
    for node in binding_nodes:
        kind = type(node)
        if kind is ast.Name:
            if node.id == name and type(node.ctx) is not ast.Load and id(node) not in unreached \
                    and (at is None or _may_reach(node, at, loops)):
                stores += 1
            continue
        if at is not None and (kind is ast.Assign or kind is ast.For or kind is ast.AsyncFor
                               or kind is ast.comprehension) \
                and not _may_reach(node.target if kind is ast.comprehension else node, at, loops):
            if kind is ast.Assign:
                unreached.update(id(t) for t in node.targets)
            continue
        if kind is ast.For or kind is ast.AsyncFor or kind is ast.comprehension:
            target, values = node.target, node.iter
            if not (type(target) is ast.Name and target.id == name):
                continue
            if not isinstance(values, (ast.Tuple, ast.List, ast.Set)):
                return None
            elements = values.elts
        elif kind is ast.Assign:
            if not any(type(t) is ast.Name and t.id == name for t in node.targets):
                if depth < _UNPACK_DEPTH and len(node.targets) == 1:
                    group = _unpacked_group(ctx, node.targets[0], node.value, name, depth)
                    if group is not None:
                        known += 1
                        texts.append(group)
                continue
            elements = [node.value]
        elif kind is ast.Global or kind is ast.Nonlocal:
            if name in node.names:
                return None
            continue
        else:
            continue
        known += 1 if kind is not ast.Assign else sum(
            1 for t in node.targets if type(t) is ast.Name and t.id == name)
        for element in elements:
            if isinstance(element, ast.Starred):
                return None
            text = _attribute_read(element) or (
                dotted(element) if isinstance(element, (ast.Name, ast.Attribute, ast.Call)) else
                _element_text(element) if type(element) is ast.Subscript else
                "" if isinstance(element, ast.Constant) and element.value is None else None)
            if text is None:
                return None
            texts.append(text)
    if not texts or known != stores:
        return None  # bound some other way too (unpacking, ``with ... as``, a walrus)
    groups = set()
    for text in texts:
        group = text if type(text) is _Group else ctx.group_of_text(text) if text else "world"
        if group.startswith("group:"):
            if group.startswith("group:self.") and group != f"group:{text}":
                # a communicator field the object built over one of its own groups
                # (``self.comm = Comm(group=self.cpu_group)``): bound through ``self`` at each call
                groups.add(group)
                continue
            head = text.partition(".")[0]  # a local holding a group: its attributes are that group
            if head in params and head != "self" and group == f"group:{text}" \
                    and head not in _stored_names(ctx, func, binding_nodes):
                # a parameter the function never rebinds, or its attribute (``cpu_group =
                # group.cpu_group``): what each call passes there, as a collective over the
                # text itself (:func:`~cslint.analysis.program.bound_group`)
                groups.add(group)
                continue
            if depth >= _UNPACK_DEPTH or head == name or head == "self" or not head.isidentifier():
                return None
            group = _bound_group(ctx, func, params, head, depth + 1, at)
            if group is None:
                return None
        groups.add(group)
    if any(group.startswith("group:") for group in groups):
        return next(iter(groups)) if len(groups) == 1 else None  # (no span to cover it with)
    return covering_group(groups, GROUP_SPANS, ctx.knowledge.world)


#: the nodes of a function that may bind a name :func:`_bound_group` asks about
_BINDING_TYPES = (ast.Assign, ast.For, ast.AsyncFor, ast.comprehension, ast.Global, ast.Nonlocal)


def _stored_names(ctx, func, bindings: tuple) -> frozenset:
    """The names a function node stores to (``bindings``: its binding nodes); once per function."""
    memo = ctx.__dict__.setdefault("_stored_names", {})
    found = memo.get(id(func))
    if found is None:
        found = memo[id(func)] = frozenset(node.id for node in bindings if type(node) is ast.Name)
    return found


def binding_nodes(info) -> tuple:
    """The nodes of the function ``info`` that may bind a name (:func:`_binding_nodes`)."""
    return _binding_nodes(info.ctx, info.func)[1]


def _binding_nodes(ctx, func) -> tuple:
    """(loops, bindings) of a function's own body, in :func:`own_nodes`'s
    order: its loop statements, and the nodes that may bind a name (a stored
    name, an assignment, a loop or comprehension target, ``global``):
    found in one walk per function, however many reads ask about its
    locals."""
    memo = ctx.__dict__.setdefault("_binding_nodes", {})
    found = memo.get(id(func))
    if found is None:
        loops, bindings = [], []
        body = func.body
        stack = list(body) if type(body) is list else [body]
        table = CHILDREN
        while stack:  # (own_nodes' walk written out: no generator resumed per node)
            node = stack.pop()
            kind = type(node)
            if kind is ast.Name:
                if type(node.ctx) is not ast.Load:
                    bindings.append(node)
                continue  # (a name has no child nodes)
            if kind in DEFINITIONS:
                continue
            if kind in LOOPS:
                loops.append(node)
            if kind in _BINDING_TYPES:
                bindings.append(node)
            read = table[kind]
            if read is not None:
                stack += read(node)
        found = memo[id(func)] = (tuple(loops), tuple(bindings))
    return found


def _loops_around(loops: tuple, at: tuple) -> tuple:
    """The (start, end) of each of a function's loops whose body holds the
    position ``at``: round one, a binding after a read reaches it."""
    spans = []
    for node in loops:
        start, end = (node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset)
        if start <= at < end:
            spans.append((start, end))
    return tuple(spans)


def _may_reach(node, at: tuple, loops: tuple) -> bool:
    """Whether a binding ``node`` can reach a read at ``at``: it runs before
    the read (an assignment: ends before it, its value is read first), or a
    loop round both carries it there."""
    start = (node.lineno, node.col_offset)
    if any(s <= start < e for s, e in loops):
        return True
    if type(node) is ast.Assign:
        return (node.end_lineno, node.end_col_offset) <= at
    return start < at


def _attribute_read(node) -> Optional[str]:
    """``getattr(obj, "name")`` or ``getattr(obj, "name", default)`` read as
    the text ``obj.name``; None for anything else."""
    if type(node) is not ast.Call or type(node.func) is not ast.Name or node.func.id != "getattr" \
            or not 2 <= len(node.args) <= 3 or node.keywords:
        return None
    attr = node.args[1]
    if not (type(attr) is ast.Constant and isinstance(attr.value, str) and attr.value.isidentifier()):
        return None
    obj = dotted(node.args[0]) if isinstance(node.args[0], (ast.Name, ast.Attribute, ast.Call)) else None
    return f"{obj}.{attr.value}" if obj else None


def _element_text(node: ast.Subscript) -> Optional[str]:
    """The text of one element of a container of groups a field or a name
    holds (``self.real_dp_process_group[i]``), read for the group its
    words name; None for anything else (the container's own group table
    is not looked up: its text must say the group)."""
    if not isinstance(node.value, (ast.Name, ast.Attribute)) or dotted(node.value) is None:
        return None
    text = unparse(node)
    return text if group_from_text(text) is not None else None


class _Group(str):
    """A group already worked out (from a helper's returns), not a text."""


def _unpacked_group(ctx, target, value, name: str, depth: int):
    """The group ``name`` gets where ``target = value`` unpacks a call of a
    module-level function of the file into names (``device, group =
    _get_group(config)``): each return of it writes out a tuple of one
    length, and the element at ``name``'s position is, in every one, a
    text naming a group or a local of the callee bound only to such texts
    (:func:`_bound_group`).  None otherwise (a starred target, a method,
    a callee's parameter)."""
    if not isinstance(target, (ast.Tuple, ast.List)) or not isinstance(value, ast.Call):
        return None
    position = next((i for i, t in enumerate(target.elts) if type(t) is ast.Name and t.id == name), None)
    if position is None or any(isinstance(t, ast.Starred) for t in target.elts):
        return None
    func = value.func
    if type(func) is not ast.Name or func.id not in ctx.module_functions:
        return None
    callee = next((n for n in ctx.tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                   and n.name == func.id), None)
    if callee is None or not returns_one_tuple_shape(callee):
        return None
    params = param_names(callee)
    groups = set()
    for node in own_nodes(callee):
        if type(node) is not ast.Return or node.value is None:
            continue
        if type(node.value) is ast.Constant and node.value.value is None:
            continue  # `return None`: nothing unpacked
        if not isinstance(node.value, ast.Tuple):
            return None  # a tuple chosen by a test (`a if t else b`): not read here
        elts = node.value.elts
        if len(elts) != len(target.elts):
            return None
        element = elts[position]
        if type(element) is ast.Name:
            group = _bound_group(ctx, callee, params, element.id, depth + 1)
        elif isinstance(element, (ast.Attribute, ast.Call)):
            group = ctx.group_of_text(dotted(element) or "")
        elif isinstance(element, ast.Constant) and element.value is None:
            group = "world"
        else:
            return None
        if group is None or group.startswith("group:"):
            return None
        groups.add(group)
    if not groups:
        return None
    return _Group(covering_group(groups, GROUP_SPANS, ctx.knowledge.world))
