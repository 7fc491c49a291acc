"""Modules wrapped for data parallelism (``DistributedDataParallel``,
``FullyShardedDataParallel``, ``fully_shard``: the presets'
``data_parallel_wrappers``).  Calling one runs its forward, which
communicates (parameter all-gathers, buffer broadcasts) on this rank's own
batch; the backward of what it computed all-reduces the gradients.  Which
names of a function hold such a module: its own wrappings, the fields its
class's methods wrap, and the fields a function of the file wraps on an
object it receives."""

from __future__ import annotations

import ast
from typing import Optional

from ..presets import GROUP_SPANS, CollectiveSpec, covering_group, fnmatch_any, group_from_text
from .astwalk import own_nodes, walk as fast_walk, walked
from .communicators import (assigned_fields, attribute_bound_locals, group_holding_locals, param_chain_locals,
                             registry_lookup_key, with_copies)
from .fallbacks import fallback_candidates, param_fallbacks
from .records import CollectiveMatch
from .collectivegroups import runs_over_receiver
from .scope import canonical_text
from .shapes import returns_one_tuple_shape
from .syntax import dotted, unparse


#: What calling a module wrapped for data parallelism issues: its forward
#: (communicates; its output is this rank's, computed from its own batch) and
#: the backward of a value computed from that output (the gradient all-reduce).
#: The forward also runs the module's own code on this rank's batch, which can
#: fail on one rank only (a batch the model refuses): local work, as a
#: framework's training loop (``CollectiveSpec.local_work``).
WRAPPED_FORWARD = CollectiveSpec("<module wrapped for data parallelism>", "torch", result="local", local_work=True)
WRAPPED_BACKWARD = CollectiveSpec("<backward through a data-parallel module>", "torch", result="uniform")


def match_call(info, call: ast.Call, raw: Optional[str], canon: Optional[str]):
    """The :class:`CollectiveMatch` of a call: a preset or configured
    collective, or a call of a module this function wrapped for data
    parallelism (``model = DistributedDataParallel(m); model(batch)``) and
    the ``backward()`` of what it computed; None otherwise."""
    match = info.ctx.match_collective(call, raw, canon) if raw else None
    if match is None and raw and raw.startswith("super()."):
        match = inherited_collective(info, call, raw)
    if match is not None:
        group = match.group
        if runs_over_receiver(info.ctx, call, match):
            return match._replace(group=_receiver_group(info, call) or group)
        if group.startswith("group:"):
            head, dot, rest = group[6:].partition(".")  # a group's own attributes are that group
            local = local_group(info, head) if head.isidentifier() and head != "self" else None
            if local is not None:
                return match._replace(group=local)
            param = param_with_fallback(info, head)
            if param is not None:
                return match._replace(group=f"group:{param}{dot}{rest}")
        return match
    if not raw or not imports_a_wrapper(info.ctx):
        return match
    models, outputs = wrapped_models(info)
    if raw in models:
        return CollectiveMatch("forward", models[raw][0], "torch", WRAPPED_FORWARD)
    receiver, _, name = raw.rpartition(".")
    if name == "backward" and receiver in outputs:
        return CollectiveMatch("backward", outputs[receiver], "torch", WRAPPED_BACKWARD)
    if receiver in models and (name == "forward" or name in models[receiver][1]):
        return CollectiveMatch(name, models[receiver][0], "torch",
                               WRAPPED_FORWARD if name == "forward" else WRAPPED_BACKWARD)
    return None


def _receiver_group(info, call: ast.Call) -> Optional[str]:
    """The group of the object a group-coordinator method collective is
    called on (``recv_group.all_gather(t)``, ``self.all_reduce(t)`` inside
    the coordinator, :func:`~cslint.analysis.scope.runs_over_receiver`):
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
    found = _bound_group(info.ctx, info.func, {p.lstrip("*") for p in info.params}, name, 0, at)
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
    for index, (key, text) in enumerate(passed):
        head, dot, rest = text.partition(".")
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
    if head == info.self_name or head not in {p.lstrip("*") for p in info.params}:
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
        params = {p.lstrip("*") for p in info.params}
        names = set()
        copies = []  # ``g = group``: a local bound from another local
        for node in own_nodes(info.func):
            if type(node) is ast.Assign and isinstance(node.value, (ast.Name, ast.Attribute, ast.Call)):
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
_LOOP_TYPES = (ast.For, ast.AsyncFor, ast.While)


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
        for node in own_nodes(func):
            kind = type(node)
            if kind is ast.Name:
                if type(node.ctx) is not ast.Load:
                    bindings.append(node)
                continue
            if kind in _LOOP_TYPES:
                loops.append(node)
            if kind in _BINDING_TYPES:
                bindings.append(node)
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
    params = {a.arg for a in (*callee.args.posonlyargs, *callee.args.args, *callee.args.kwonlyargs)}
    params |= {a.arg for a in (callee.args.vararg, callee.args.kwarg) if a is not None}
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


def inherited_collective(info, call: ast.Call, raw: str):
    """The :class:`CollectiveMatch` of ``super().name(...)`` in a method of
    a class derived from a library class: that class's ``name``
    (``super().__iter__()`` in a ``DataLoader`` subclass is
    ``torch.utils.data.DataLoader.__iter__``).  Only the library bases
    listed before any base of the file count: a base of the file may
    define ``name`` itself, and the resolver follows it."""
    ctx = info.ctx
    if not info.class_key:
        return None
    for base in ctx.class_bases.get(info.class_key, ()):
        if base in ctx.module_classes:
            return None
        match = ctx.match_collective(call, raw, base + raw[len("super()"):])
        if match is not None:
            return match
    return None


def wrapped_models(info) -> tuple:
    """({text: (group, methods)} of the modules wrapped for data parallelism
    -- the function's own locals and the fields (``self.model``) its class's
    methods assign a wrapper to --, {local name: group} of the values
    computed from calling them), from assignments (``fully_shard(m)`` wraps
    ``m`` in place)."""
    if info._wrapped is not None:
        return info._wrapped
    ctx = info.ctx
    models = {}
    if info.self_name and info.class_key:
        for attr, wrapped in wrapped_fields(ctx, info.class_key).items():
            models[f"{info.self_name}.{attr}"] = wrapped
    received = [p.lstrip("*") for p in info.params if p.lstrip("*") != info.self_name]
    if received:
        for attr, wrapped in wrapped_received_fields(ctx).items():
            for name in received:
                models[f"{name}.{attr}"] = wrapped
    if info.class_key is None and "." not in info.qualname:
        models.update(wrapped_params(ctx).get(info.qualname, {}))
    models.update(_wrapped_locals(ctx, info.func))
    outputs: dict = {}
    # a value computed from a wrapped module needs one to call (most functions have none)
    assignments = [(node.targets[0].id, node.value) for node in own_nodes(info.func)
                   if isinstance(node, ast.Assign) and len(node.targets) == 1
                   and isinstance(node.targets[0], ast.Name)] if models else ()
    changed = True
    while changed:
        changed = False
        for name, value in assignments:
            if name in outputs:
                continue
            for sub in fast_walk(value):
                found = None
                if isinstance(sub, ast.Call) and dotted(sub.func) in models:
                    found = models[dotted(sub.func)][0]
                elif isinstance(sub, ast.Name) and sub.id in outputs:
                    found = outputs[sub.id]
                if found is not None:
                    outputs[name] = found
                    changed = True
                    break
    info._wrapped = (models, outputs)
    return info._wrapped


def imports_a_wrapper(ctx) -> bool:
    """Whether the file imports a data-parallel wrapper by name (``from
    torch.nn.parallel import DistributedDataParallel``): only then are its
    modules' wrappings looked for (a wrapper reached as ``torch.nn.parallel.
    DistributedDataParallel`` without an import is not)."""
    found = ctx.__dict__.get("_imports_a_wrapper")
    if found is None:
        tails = {pattern.rsplit(".", 1)[-1] for pattern, _ in ctx.knowledge.data_parallel_wrappers}
        found = any(canon.rsplit(".", 1)[-1] in tails for canon in ctx.imports.values()) \
            or bool(partitioning_withs(ctx))
        ctx.__dict__["_imports_a_wrapper"] = found
    return found


def partitioning_withs(ctx) -> dict:
    """{id(with statement): (group, methods)} of the file's ``with``
    statements that enter a partitioning context of the presets (``with
    deepspeed.zero.Init():``), looked for only in files importing the
    context's top package; computed once per file."""
    found = ctx.__dict__.get("_partitioning_withs")
    if found is not None:
        return found
    found = {}
    contexts = ctx.knowledge.partitioning_contexts
    heads = {pattern.split(".", 1)[0] for pattern, _ in contexts}
    if contexts and any(canon.split(".", 1)[0] in heads for canon in ctx.imports.values()):
        for node in fast_walk(ctx.tree):
            if isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    call = item.context_expr
                    raw = dotted(call.func) if isinstance(call, ast.Call) else None
                    canon = canonical_text(raw, ctx.imports) if raw else None
                    methods = next((tuple(m) for pattern, m in contexts if canon and fnmatch_any(canon, [pattern])),
                                   None)
                    if methods is not None:
                        found[id(node)] = ("world", methods)
                        break
    ctx.__dict__["_partitioning_withs"] = found
    return found


def file_builders(ctx) -> dict:
    """{function name: (group, methods)} of the module-level functions of
    the file that return a module wrapped for data parallelism (``return
    FullyShardedDataParallel(m)``, ``fully_shard(m); return m``, a module
    built under a partitioning context): what a call of one returns is that
    wrapped module, wherever the file keeps it (a local, a field).  Only a
    builder's own wrappings count (a builder calling another is not
    followed); computed once per file."""
    found = ctx.__dict__.get("_file_builders")
    if found is not None:
        return found
    found = {}
    for node in ctx.tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            returned = _find_wrapped_locals(ctx, node, {})[1]
            if returned is not None:
                found[node.name] = returned
    ctx.__dict__["_file_builders"] = found
    return found


def wrapped_params(ctx) -> dict:
    """{function name: {parameter: (group, methods)}} of the module-level
    functions of the file that a call in the file hands a wrapped module
    (``model = build(config); decode(model, ids)``, ``decode(build(config))``,
    ``decode(self.model)`` where a method of the class wrapped the field): the parameter holds the
    wrapped module, so calling it is the forward.  One step of hand-over (a
    parameter passed on again is not followed); computed once per file."""
    found = ctx.__dict__.get("_wrapped_params")
    if found is not None:
        return found
    found = {}
    signatures = {}
    for node in ctx.tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            signatures[node.name] = ([a.arg for a in args.posonlyargs + args.args],
                                     {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs})
    builders = file_builders(ctx)

    def handed(arg, held):
        if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) and arg.func.id in builders:
            return builders[arg.func.id]  # ``decode(build(config))``
        text = dotted(arg) if not isinstance(arg, ast.Starred) else None
        return held.get(text) if text else None

    if signatures:
        for caller, class_name in _functions_with_class(ctx.tree):
            held = dict(_wrapped_locals(ctx, caller))
            if class_name and caller.args.args:
                owner = caller.args.args[0].arg
                for attr, wrapped in wrapped_fields(ctx, f"{ctx.module}:{class_name}").items():
                    held.setdefault(f"{owner}.{attr}", wrapped)
            if not held and not builders:
                continue
            for call in own_nodes(caller):
                if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name) \
                        or call.func.id not in signatures:
                    continue
                positional, names = signatures[call.func.id]
                for index, arg in enumerate(call.args[:len(positional)]):
                    wrapped = handed(arg, held)
                    if wrapped is not None:
                        found.setdefault(call.func.id, {}).setdefault(positional[index], wrapped)
                for keyword in call.keywords:
                    wrapped = handed(keyword.value, held) if keyword.arg in names else None
                    if wrapped is not None:
                        found.setdefault(call.func.id, {}).setdefault(keyword.arg, wrapped)
    ctx.__dict__["_wrapped_params"] = found
    return found


def _functions_with_class(tree: ast.Module):
    """(function, name of its class or None) of the module-level functions
    and the methods of module-level classes."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node, None
        elif isinstance(node, ast.ClassDef):
            for method in node.body:
                if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield method, node.name


def wrapped_fields(ctx, class_key: str) -> dict:
    """{field: (group, methods)} of the fields the methods of a class of this
    file assign a module wrapped for data parallelism to (``self.model =
    FullyShardedDataParallel(module)``); computed once per class."""
    memo = ctx.__dict__.setdefault("_wrapped_fields", {})
    found = memo.get(class_key)
    if found is not None:
        return found
    found = {}
    name = class_key.split(":", 1)[-1]
    for node in ctx.tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            for method in node.body:
                if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and method.args.args:
                    owner = method.args.args[0].arg
                    for text, wrapped in _wrapped_locals(ctx, method).items():
                        if text.startswith(owner + ".") and text.count(".") == 1:
                            found[text.split(".", 1)[1]] = wrapped
    memo[class_key] = found
    return found


def wrapped_received_fields(ctx) -> dict:
    """{field: (group, methods)} of the fields a function of this file wraps
    for data parallelism on an object it receives as a parameter
    (``def shard(model): model.visual = FullyShardedDataParallel(model.visual)``).
    The object leaves the function with the wrapped module in that field, so
    the file's functions that receive an object of unknown class and read the
    field call the wrapped module (the objects are told apart by the field's
    name only, as the file's own convention); computed once per file."""
    found = ctx.__dict__.get("_wrapped_received_fields")
    if found is not None:
        return found
    found = {}
    for node in walked(ctx.tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        args = node.args
        params = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
        if not params:
            continue
        for text, wrapped in _wrapped_locals(ctx, node).items():
            head, _, attr = text.partition(".")
            if head in params and attr and "." not in attr and head not in ("self", "cls"):
                found.setdefault(attr, wrapped)
    ctx.__dict__["_wrapped_received_fields"] = found
    return found


def _wrapped_locals(ctx, func: ast.AST) -> dict:
    """{assigned text: (group, methods)} of the wrapper calls a function makes
    (``model = DDP(m)``, ``self.model = FSDP(m)``, ``fully_shard(m)``,
    ``model = build(config)`` of a builder of the file, a module built under
    a partitioning context); worked out once per function of the file (its
    own wrappings, its class's and the file's wrapped fields all ask)."""
    memo = ctx.__dict__.setdefault("_wrapped_locals", {})
    known = memo.get(id(func))
    if known is None:
        known = memo[id(func)] = _find_wrapped_locals(ctx, func, file_builders(ctx))[0]
    return known


def _find_wrapped_locals(ctx, func: ast.AST, builders: dict) -> tuple:
    """({assigned text: (group, methods)}, (group, methods) of the wrapped
    module the function returns or None)."""
    wrappers = ctx.knowledge.data_parallel_wrappers
    withs = partitioning_withs(ctx)
    targets: dict = {}  # id(value) -> assigned texts
    statements = set()  # id() of the calls that are whole expression statements
    made: dict = {}  # id(call) -> (group, methods) of the calls that make a wrapped module
    returns = []
    out: dict = {}
    nodes = list(own_nodes(func))
    for node in nodes:
        if type(node) in (ast.With, ast.AsyncWith) and id(node) in withs:
            # what a statement directly in the body builds is partitioned
            for statement in node.body:
                value = statement.value if isinstance(statement, (ast.Assign, ast.Return)) else None
                if isinstance(value, ast.Call):
                    made[id(value)] = withs[id(node)]
    for node in nodes:
        if isinstance(node, ast.Assign):
            texts = [dotted(target) for target in node.targets]
            targets[id(node.value)] = [text for text in texts if text and "()" not in text]
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            statements.add(id(node.value))
        elif isinstance(node, ast.Return) and node.value is not None:
            returns.append(node.value)
        elif isinstance(node, ast.Call) and id(node) not in made:
            raw = dotted(node.func)
            canon = canonical_text(raw, ctx.imports) if raw else None
            methods = next((tuple(m) for pattern, m in wrappers if canon and fnmatch_any(canon, [pattern])), None)
            if methods is None:
                if type(node.func) is ast.Name and raw in builders:
                    made[id(node)] = builders[raw]
                continue
            group = "world"
            for keyword in node.keywords:
                if keyword.arg == "process_group":
                    group = group_from_text(unparse(keyword.value)) or "world"
            made[id(node)] = (group, methods)
            if id(node) in statements and node.args and isinstance(node.args[0], ast.Name):
                out.setdefault(node.args[0].id, (group, methods))  # wrapped in place (``fully_shard(m)``)
    for key, wrapped in made.items():
        for text in targets.get(key, ()):
            out[text] = wrapped
    # a wrapped local handed on as it is (``model = DDP(m)`` then ``self.model
    # = model``, the wrapping often under ``if world_size > 1``): the field or
    # name holds the same module
    for node in nodes:
        if isinstance(node, ast.Assign) and type(node.value) is ast.Name and node.value.id in out:
            for text in targets.get(id(node.value), ()):
                out.setdefault(text, out[node.value.id])
    returned = None
    for value in returns:
        if id(value) in made:
            returned = made[id(value)]
        elif isinstance(value, ast.Name) and value.id in out:
            returned = out[value.id]
        if returned is not None:
            break
    return out, returned
