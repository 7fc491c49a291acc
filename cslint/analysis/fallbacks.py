"""Group parameters with a fallback: a local a function binds to one of its
parameters, or to a default where that parameter is None
(``node_pg = cpu_group if cpu_group is not None else group``, ``pg =
process_group or default``, ``group = cpu_group`` then ``if group is None:
group = get_tp_group().cpu_group``).  Wherever a caller passes that
parameter, the local is what it passed, so a collective over the local runs
over the caller's group (:func:`~cslint.analysis.program.bound_group` binds
it at each call; :func:`~cslint.analysis.localgroups.param_with_fallback` asks).
A caller passing nothing there leaves the parameter's name, an unknown
group; one passing None, the world."""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import defaulted_parameters
from .presence import none_test
from .syntax import dotted


def fallback_candidates(ctx) -> frozenset:
    """The names some assignment of the file binds to another name or to a
    choice of a name with a fallback (``p if p is not None else q``, ``p or
    q``): the only locals whose function's bindings
    :func:`~cslint.analysis.localgroups.param_with_fallback` reads.  Once per
    file, from the assignments the walk collecting the imports kept."""
    found = ctx.__dict__.get("_fallback_candidates")
    if found is None:
        found = ctx.__dict__["_fallback_candidates"] = frozenset(
            name for name, value in ctx.name_writes
            if type(value) is ast.Name or _preferred_param(value, None) is not None)
    return found


def param_fallbacks(info, bindings) -> dict:
    """{local: the parameter it holds} of the function ``info``, from its
    binding nodes ``bindings`` (stored names and assignments, in walk
    order): a local bound once to a choice of a parameter with a fallback,
    or bound to a parameter and otherwise only by statements of the body of
    ``if local is None:``, and by nothing else."""
    params = info.param_names
    chosen: dict = {}
    stores: dict = {}  # local -> how many bindings of it
    guarded: dict = {}  # local -> how many of them are statements of the body of ``if local is None:``
    parents = None
    for node in bindings:
        kind = type(node)
        if kind is ast.Name:
            stores[node.id] = stores.get(node.id, 0) + 1
        elif kind is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name:
            name = node.targets[0].id
            if name in params:
                continue
            value = node.value
            if type(value) is ast.Name:
                if value.id in params:
                    chosen[name] = (value.id, True)
                    continue
            else:
                param = _preferred_param(value, params)
                if param is not None:
                    chosen[name] = (param, False)
                    continue
            if parents is None:
                parents = info.parents
            parent = parents.get(id(node))
            if type(parent) is ast.If and _tests_none(parent.test, name) and any(stmt is node for stmt in parent.body):
                guarded[name] = guarded.get(name, 0) + 1
    return {name: param for name, (param, plain) in chosen.items()
            if stores.get(name) == 1 + (guarded.get(name, 0) if plain else 0)}


def _tests_none(test: ast.AST, name: str) -> bool:
    """Whether ``test`` is ``name is None``."""
    return none_test(test) == (name, True)


def _preferred_param(value: ast.AST, params: Optional[set]) -> Optional[str]:
    """``p`` of ``p if p is not None else q``, ``q if p is None else p``,
    ``p if p else q`` and ``p or q``, where ``p`` is a parameter (any name
    where ``params`` is None); else None."""
    if type(value) is ast.BoolOp and type(value.op) is ast.Or and len(value.values) == 2:
        first = value.values[0]
        return first.id if type(first) is ast.Name and (params is None or first.id in params) else None
    if type(value) is not ast.IfExp:
        return None
    test, body, orelse = value.test, value.body, value.orelse
    if type(test) is ast.Name:
        return test.id if (params is None or test.id in params) and type(body) is ast.Name \
            and body.id == test.id else None
    if type(test) is not ast.Compare or len(test.ops) != 1 or type(test.left) is not ast.Name \
            or type(test.comparators[0]) is not ast.Constant or test.comparators[0].value is not None:
        return None
    name = test.left.id
    kept = body if type(test.ops[0]) is ast.IsNot else orelse if type(test.ops[0]) is ast.Is else None
    return name if (params is None or name in params) and type(kept) is ast.Name and kept.id == name else None


def default_groups(info, bindings_of) -> tuple:
    """``((parameter, group), ...)`` of the function ``info``: each parameter
    whose default is None that the function binds once more, and only to a
    group its text names where the caller's is None (``group =
    get_tp_group() if group is None else group``, ``group = group or
    get_tp_group()``, ``if group is None: group = get_tp_group()``): a call
    that passes nothing or None there runs the function's collectives over
    its parameter on that group (:func:`~cslint.analysis.program.bound_group`).
    ``bindings_of()``: its binding nodes (stored names and assignments),
    asked only where some parameter defaults to None."""
    defaulted = none_defaulted(info.func)
    if not defaulted or defaulted.isdisjoint(_written_names(info.ctx)):
        return ()
    stores: dict = {}
    chosen: dict = {}
    parents = None
    for node in bindings_of():
        kind = type(node)
        if kind is ast.Name:
            if node.id in defaulted:
                stores[node.id] = stores.get(node.id, 0) + 1
        elif kind is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name \
                and node.targets[0].id in defaulted:
            name, value = node.targets[0].id, node.value
            fallback = _fallback_value(value, name)
            if fallback is None:
                if parents is None:
                    parents = info.parents
                parent = parents.get(id(node))
                if type(parent) is ast.If and _tests_none(parent.test, name) \
                        and any(stmt is node for stmt in parent.body):
                    fallback = value
            text = dotted(fallback) if isinstance(fallback, (ast.Name, ast.Attribute, ast.Call)) else None
            group = info.ctx.group_of_text(text) if text else None
            chosen[name] = group if group is not None and not group.startswith("group:") else None
    return tuple(sorted((name, group) for name, group in chosen.items()
                        if group is not None and stores.get(name) == 1))


def _written_names(ctx) -> frozenset:
    """The names some assignment of the file binds to a name, an attribute
    or call chain, or a choice (the walk collecting the imports kept them):
    a parameter rebound to a group's text is among them.  Once per file."""
    found = ctx.__dict__.get("_written_names")
    if found is None:
        found = ctx.__dict__["_written_names"] = frozenset(name for name, _value in ctx.name_writes)
    return found


def none_defaulted(func) -> frozenset:
    """The parameters of a function node whose default is None."""
    args = getattr(func, "args", None)
    if args is None:
        return frozenset()
    return frozenset(a.arg for a, d in defaulted_parameters(args) if type(d) is ast.Constant and d.value is None)


def _fallback_value(value: ast.AST, name: str) -> Optional[ast.AST]:
    """``q`` of ``q if name is None else name``, ``name if name is not None
    else q`` and ``name or q``; else None."""
    if type(value) is ast.BoolOp and type(value.op) is ast.Or and len(value.values) == 2:
        first = value.values[0]
        return value.values[1] if type(first) is ast.Name and first.id == name else None
    if type(value) is not ast.IfExp:
        return None
    test = value.test
    if type(test) is not ast.Compare or len(test.ops) != 1 or type(test.left) is not ast.Name \
            or test.left.id != name or type(test.comparators[0]) is not ast.Constant \
            or test.comparators[0].value is not None:
        return None
    if type(test.ops[0]) is ast.Is:
        kept, fallback = value.orelse, value.body
    elif type(test.ops[0]) is ast.IsNot:
        kept, fallback = value.body, value.orelse
    else:
        return None
    return fallback if type(kept) is ast.Name and kept.id == name else None
