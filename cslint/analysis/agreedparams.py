"""The parameters a function or method of a module agrees in place: it
hands the object it received, as it received it, to a collective writing
its buffer in place (``dist.all_reduce(t)``), or to another such function of
the module, on every path by which it returns, so the caller's object is
agreed over that group once the call is back (:func:`agreed_in_place`,
read by the transfer of a call statement, ``transfer.py``).  Read off the
syntax of the helper's straight-line body; the other ways a helper agrees a
buffer (a collective skipped where its group has one rank, a buffer relayed
down the stages) are ``agreedbuffers.py``'s."""

from __future__ import annotations

import ast

from .agreedbuffers import (LOOP_GROUP, first_stage_test, loop_over_groups, passes_group, relayed_in_place,
                            several_ranks_group)
from .astwalk import DEFINITIONS, children_into, param_names, walked
from .asyncwork import asks_async
from .bindings import assigned_names
from .callrefs import func_ref, is_classmethod, method_ref, positional_params, receiver_param
from .grouptests import single_rank_side
from .scope import ModuleContext, canonical_text
from .syntax import dotted
from .vocabulary import BUFFER_KEYWORDS


def agreeing_callees(ctx: ModuleContext) -> bool:
    """Whether some function or method of the module of ``ctx`` agrees a
    parameter in place (:func:`agreed_in_place`): worked out once per file."""
    found = ctx.__dict__.get("_agreeing_callees")
    if found is None:
        found = ctx.__dict__["_agreeing_callees"] = any(
            agreed_in_place(ctx, func_ref(ctx.module, q) if "." not in q else
                            method_ref(f"{ctx.module}:{q.partition('.')[0]}", q.partition(".")[2]))
            for q in ctx.definitions())
    return found


def agreed_in_place(ctx: ModuleContext, ref) -> dict:
    """{parameter name: group} of a function or method of the module of ``ctx``
    that hands the parameter's object, as it received it, to a
    collective writing its buffer in place (``dist.all_reduce(t)``, or a
    call of another such function of the module) on every path by which
    it returns: the caller's object is agreed over that group once the
    call is back.  Read off the syntax of its straight-line body
    (through ``with``); a ``return`` before the collective ends the
    search unless only a group of one rank takes it."""
    tag = ref.tag
    if tag == "func":
        if ref.module != ctx.module:
            return {}
        qualname = ref.qualname
    elif tag == "method":
        module, _, cls = ref.class_key.partition(":")
        if module != ctx.module:
            return {}
        qualname = f"{cls}.{ref.name}"
    else:
        return {}
    memo = ctx.__dict__.setdefault("_agreed_in_place", {})  # qualname -> {parameter: group}
    known = memo.get(qualname)
    if known is None:
        function = ctx.definitions().get(qualname)
        memo[qualname] = {}  # a helper that calls itself agrees nothing through that call
        known = memo[qualname] = {} if function is None else \
            agreed_parameters(ctx, function, qualname.rpartition(".")[0])
    return known


def _returns_in(stmt: ast.stmt) -> bool:
    """Whether a ``return`` (or ``yield``) of the function is inside ``stmt``
    (nested definitions aside)."""
    stack = [stmt]
    while stack:
        node = stack.pop()
        t = type(node)
        if t is ast.Return or t is ast.Yield or t is ast.YieldFrom:
            return True
        if t in DEFINITIONS or isinstance(node, ast.expr_context):
            continue
        children_into(node, stack)
    return False


def _single_rank_exit(ctx: ModuleContext, stmt: ast.stmt) -> bool:
    """``if world_size == 1: return`` (either way round): the returns are
    all on the side only a group of one rank takes."""
    if type(stmt) is not ast.If:
        return False
    side = single_rank_side(stmt.test, ctx.size_reads)
    if side is None:
        return False
    taken, other = (stmt.body, stmt.orelse) if side else (stmt.orelse, stmt.body)
    return not any(_returns_in(s) for s in other) and any(_returns_in(s) for s in taken)


def agreed_parameters(ctx: ModuleContext, function, class_name: str) -> dict:
    """:func:`agreed_in_place` of one function node."""
    params = param_names(function, starred=False)
    if not params:
        return {}
    # the object whose methods the body calls; not a classmethod's class: a call through it passes no object
    self_name = receiver_param(function) if class_name and not is_classmethod(function) else None
    open_params = set(params) - {self_name}
    agreed: dict = {}
    statements = []  # the straight-line body, through ``with``
    last = -1  # the last of them that hands a parameter to what agrees it in place
    candidates: dict = {}  # position -> [(parameter, group)] its call agrees
    staged: dict = {}  # parameter -> the group a first stage's ``if`` agrees it over
    waits: dict = {}  # handle name -> [(parameter, group)] the asynchronous collective bound to it agrees at its wait
    stack = list(reversed(function.body))
    while stack:
        stmt = stack.pop()
        t = type(stmt)
        if t is ast.With or t is ast.AsyncWith:
            stack.extend(reversed(stmt.body))
            continue
        statements.append(stmt)
        found = _statement_agrees(ctx, stmt, open_params, self_name, class_name, staged)
        if waits:
            for name in assigned_names(stmt):
                waits.pop(name, None)  # the handle name holds another object from here
            waited = _waited_name(stmt)
            if waited is not None and waited in waits:
                found = found + waits.pop(waited)
        if t is ast.Assign and len(stmt.targets) == 1 and type(stmt.targets[0]) is ast.Name \
                and type(stmt.value) is ast.Call and asks_async(stmt.value):
            # ``work = dist.all_reduce(t, async_op=True)``: ``t`` holds the group's value at ``work.wait()``
            waits[stmt.targets[0].id] = [pair for pair in _buffers_agreed(ctx, stmt.value, self_name, class_name, True)
                                         if pair[0] in open_params]
        if found:
            candidates[len(statements) - 1] = found
            last = len(statements) - 1
    for index, stmt in enumerate(statements[:last + 1]):
        if not open_params:
            break
        for name, group in candidates.get(index, ()):
            if name in open_params:
                agreed[name] = group
                open_params.discard(name)
        for name in assigned_names(stmt):
            open_params.discard(name)  # a later collective works on another object
        if _returns_in(stmt) and not _single_rank_exit(ctx, stmt):
            break
    return agreed


def _statement_agrees(ctx: ModuleContext, stmt: ast.stmt, open_params: set, self_name, class_name: str,
                      staged: dict) -> list:
    """[(parameter, group)] a statement of a helper's straight-line body
    agrees in place on every way through it: a call (:func:`_buffers_agreed`),
    the relay of a parameter a first stage's ``if`` before it agreed
    (``staged``), an ``if`` with no ``else`` whose arm agrees it over the
    group the test says has one rank where the arm is skipped, a loop over
    groups written out each of which it agrees so (``agreedbuffers``).  An
    ``if`` of the first stage alone records its arm's agreements in
    ``staged`` instead."""
    t = type(stmt)
    if t is ast.Expr or t is ast.Assign:
        call = stmt.value
        if type(call) is not ast.Call or not any(type(a) is ast.Name and a.id in open_params
                                                 for a in call.args + [kw.value for kw in call.keywords]):
            return []
        found = [pair for pair in _buffers_agreed(ctx, call, self_name, class_name) if pair[0] in open_params]
        if staged:
            found += [(name, staged[name]) for name in _relayed_names(ctx, call, self_name, class_name)
                      if name in staged and name in open_params]
        return found
    if t is ast.If and not stmt.orelse:
        first_stage = first_stage_test(stmt.test)
        group = None if first_stage else several_ranks_group(stmt.test, ctx.size_reads, group_of=ctx.group_word)
        if not first_stage and group is None:
            return []  # the test first: most ``if``s are of neither kind, and their arms need no walk
        arm = [pair for inner in stmt.body
               for pair in _statement_agrees(ctx, inner, open_params, self_name, class_name, {})
               if first_stage or pair[1] == group]
        if not arm or _returns_in(stmt):
            return []
        spoilt = {name for inner in stmt.body for name in assigned_names(inner)}
        arm = [pair for pair in arm if pair[0] not in spoilt]
        if first_stage:
            staged.update(arm)
            return []
        return arm
    if t is ast.For:
        return _loop_agrees(ctx, stmt, open_params)
    return []


def _loop_agrees(ctx: ModuleContext, stmt: ast.For, open_params: set) -> list:
    """[(parameter, group)] of ``for g in (self.cp_group, self.tp_group):``
    whose body agrees the parameter over ``g`` wherever ``g`` has several
    ranks (``if g is not None and get_world_size(group=g) > 1:
    dist.all_reduce(t, group=g)``), returns, breaks and continues nowhere
    and rebinds neither:
    agreed over the group spanning them all."""
    spanning = loop_over_groups(stmt)
    if spanning is None or _returns_in(stmt) or any(type(node) in (ast.Break, ast.Continue) for node in walked(stmt)):
        return []  # a ``break`` or ``continue`` may skip a group's collective
    loop_name = stmt.target.id
    found: set = set()
    spoilt = {loop_name}
    for inner in stmt.body:
        calls = [inner.value] if type(inner) is ast.Expr else []
        if type(inner) is ast.If and not inner.orelse \
                and several_ranks_group(inner.test, ctx.size_reads, loop_name, ctx.group_word) == LOOP_GROUP:
            calls = [s.value for s in inner.body if type(s) is ast.Expr]
        for call in calls:
            if type(call) is not ast.Call or not passes_group(call, loop_name):
                continue
            raw = dotted(call.func)
            match = ctx.match_collective(call, raw, canonical_text(raw, ctx.imports)) if raw else None
            if match is None or match.spec is None or asks_async(call):
                continue  # (an asynchronous one agrees only where its handle is waited on)
            found.update(call.args[index].id for index in match.spec.inplace
                         if index < len(call.args) and type(call.args[index]) is ast.Name)
            found.update(kw.value.id for kw in call.keywords
                         if kw.arg in BUFFER_KEYWORDS and type(kw.value) is ast.Name)
        for node in walked(inner):
            if type(node) is ast.Name and type(node.ctx) is not ast.Load:
                spoilt.add(node.id)
    return [(name, spanning) for name in sorted(found - spoilt) if name in open_params]


def _relayed_names(ctx: ModuleContext, call: ast.Call, self_name, class_name: str) -> list:
    """The plain names a call of a function of the module (or a method
    through ``self``) passes for the parameters it relays down the pipeline
    in place (:func:`agreedbuffers.relayed_in_place`)."""
    func = call.func
    if type(func) is ast.Name and func.id in ctx.module_functions:
        qualname, through_self = func.id, False
    elif type(func) is ast.Attribute and self_name and type(func.value) is ast.Name and func.value.id == self_name:
        qualname, through_self = f"{class_name}.{func.attr}", True
    else:
        return []
    target = ctx.definitions().get(qualname)
    if target is None:
        return []
    params = positional_params(target, through_self)
    memo = ctx.__dict__.setdefault("_relayed_in_place", {})
    relayed = memo.get(qualname)
    if relayed is None:
        passed = frozenset(params) | {a.arg for a in target.args.kwonlyargs}
        relayed = memo[qualname] = relayed_in_place(target, passed, ctx.knowledge, lambda s: _single_rank_exit(ctx, s))
    if not relayed:
        return []
    out = [arg.id for index, arg in enumerate(call.args)
           if type(arg) is ast.Name and index < len(params) and params[index] in relayed]
    return out + [kw.value.id for kw in call.keywords if kw.arg in relayed and type(kw.value) is ast.Name]


def _waited_name(stmt: ast.stmt):
    """The name ``name.wait()`` waits on, where that call is the whole statement; else None."""
    if type(stmt) is not ast.Expr or type(stmt.value) is not ast.Call:
        return None
    func = stmt.value.func
    if type(func) is ast.Attribute and func.attr == "wait" and type(func.value) is ast.Name \
            and not stmt.value.args and not stmt.value.keywords:
        return func.value.id
    return None


def _buffers_agreed(ctx: ModuleContext, call: ast.Call, self_name, class_name: str, waited: bool = False) -> list:
    """[(name, group)] of the plain names a call agrees in place: the
    buffers of an in-place collective, the arguments a function or method
    of the module agrees (:func:`agreed_in_place`).  An asynchronous
    collective (``async_op=True``) agrees nothing at the call, only at the
    wait on its handle (``waited``): dropped, returned or handed on, its
    buffers may still hold this rank's value when the caller reads them."""
    raw = dotted(call.func)
    if not raw:
        return []
    match = ctx.match_collective(call, raw, canonical_text(raw, ctx.imports))
    out = []
    if match is not None:
        if match.spec is None or (not waited and asks_async(call)):
            return out
        for index in match.spec.inplace:
            if index < len(call.args) and type(call.args[index]) is ast.Name:
                out.append((call.args[index].id, match.group))
        for kw in call.keywords:
            if kw.arg in BUFFER_KEYWORDS and type(kw.value) is ast.Name:
                out.append((kw.value.id, match.group))
        return out
    func = call.func
    if type(func) is ast.Name and func.id in ctx.module_functions:
        ref = func_ref(ctx.module, func.id)
    elif type(func) is ast.Attribute and self_name and type(func.value) is ast.Name and func.value.id == self_name:
        ref = method_ref(f"{ctx.module}:{class_name}", func.attr)
    else:
        return out
    return passed_names(ctx, call, ref)


def passed_names(ctx: ModuleContext, call: ast.Call, ref) -> list:
    """[(name, group)]: the plain names a call of ``ref`` (a function of
    the module, or a method through ``self``) passes, by position or by
    keyword, for the parameters it agrees in place."""
    agreed = agreed_in_place(ctx, ref)
    if not agreed:
        return []
    target = ctx.definitions()[ref.qualname if ref.tag == "func" else f"{ref.class_key.partition(':')[2]}.{ref.name}"]
    params = positional_params(target, ref.tag != "func")
    out = []
    for index, arg in enumerate(call.args):
        if type(arg) is ast.Starred:
            break
        if index < len(params) and params[index] in agreed and type(arg) is ast.Name:
            out.append((arg.id, agreed[params[index]]))
    for kw in call.keywords:
        if kw.arg in agreed and type(kw.value) is ast.Name:
            out.append((kw.value.id, agreed[kw.arg]))
    return out
