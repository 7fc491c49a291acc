"""Module-global registries filled lazily, per rank.

A module-level container that starts empty and that a function of the file
fills on first use (``if name not in _TRACKER: _TRACKER[name] = ...``) holds
the keys this process happened to meet: the routers that ran on this
pipeline stage, the timers this rank started, the caches its own requests
filled.  A loop over it that issues a collective per entry then runs as many
times as this rank's history says (Megatron-LM's MoE auxiliary-loss tracker:
a stage of dense layers has no router, an empty tracker, and skips the
pipeline all-reduces the MoE stages make; fixed in e6759409 by reducing the
configured loss names instead).

A registry whose entries are made by a collective (a table of process groups
created on first use: ``_GROUPS[key] = dist.new_group(ranks)``) is filled
alike on every rank, or the fill itself would hang; it is not one here.  Only
a loop over the registry counts (its keys, items or values), where the call
reads the entry: a membership test on it, its length or truth decide no
site (the first-use test itself is what every rank takes for its own keys).
"""

from __future__ import annotations

import ast
from typing import Optional

from ..presets import KIND_LAZY_REGISTRY
from .astwalk import walk as fast_walk, walked
from .atoms import EMPTY, source
from .scope import canonical_text
from .syntax import dotted
from .vocabulary import ALL_MODES_ALL_DIMS
from .wrappers import own_nodes

_EMPTY_FACTORIES = frozenset({"dict", "list", "set", "OrderedDict", "defaultdict"})
_VIEWS = frozenset({"items", "keys", "values"})
_ADDERS = frozenset({"setdefault", "append", "add"})


def lazy_registries(ctx) -> dict:
    """{module-global name: the line of the first-use test that fills it}
    of this file; computed once per file, when a loop first iterates a
    module-level container that starts empty."""
    found = ctx.__dict__.get("_lazy_registries")
    if found is not None:
        return found
    found = {}
    empty = _empty_globals(ctx)
    for func in walked(ctx.tree):
        if type(func) not in (ast.FunctionDef, ast.AsyncFunctionDef):
            continue
        for node in own_nodes(func):
            if type(node) is not ast.If:
                continue
            name = _first_use_test(node.test, empty)
            if name is not None and name not in found and _fills(node.body, name, ctx):
                found[name] = node.lineno
    ctx.__dict__["_lazy_registries"] = found
    return found


def _empty_globals(ctx) -> frozenset:
    """The module-level names bound to an empty container (``_TRACKER = {}``)."""
    found = ctx.__dict__.get("_empty_globals")
    if found is not None:
        return found
    found = ctx.__dict__["_empty_globals"] = _names_bound_empty(ctx.tree.body)
    return found


def _names_bound_empty(body) -> frozenset:
    """The plain names that statements of ``body`` bind to an empty container
    (``name = {}``, ``name: dict = {}``): a module's or a class's own level."""
    names = set()
    for node in body:
        if type(node) is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name \
                and _starts_empty(node.value):
            names.add(node.targets[0].id)
        elif type(node) is ast.AnnAssign and type(node.target) is ast.Name and node.value is not None \
                and _starts_empty(node.value):
            names.add(node.target.id)
    return frozenset(names)


def registry_of(ctx, iterable) -> frozenset:
    """The source a loop over ``iterable`` reads when it iterates a
    lazily filled registry of the file (``for k in _TRACKER``,
    ``_TRACKER.items()``, ``list(_TRACKER)``); empty otherwise."""
    expr = iterable
    while True:
        if type(expr) is ast.Call and type(expr.func) is ast.Attribute and expr.func.attr in _VIEWS \
                and not expr.args:
            expr = expr.func.value
        elif type(expr) is ast.Call and type(expr.func) is ast.Name and expr.func.id in ("list", "tuple", "sorted",
                                                                                         "enumerate") \
                and expr.args:
            expr = expr.args[0]
        else:
            break
    if type(expr) is not ast.Name or expr.id not in _empty_globals(ctx):
        return EMPTY
    line = lazy_registries(ctx).get(expr.id)
    if line is None:
        return EMPTY
    return frozenset({source(KIND_LAZY_REGISTRY, expr.id, ctx.path, line, ALL_MODES_ALL_DIMS)})


def _starts_empty(value) -> bool:
    t = type(value)
    if t in (ast.Dict, ast.List, ast.Set):
        return not (value.keys if t is ast.Dict else value.elts)
    if t is ast.Call and not value.keywords:
        name = (dotted(value.func) or "").rsplit(".", 1)[-1]
        return name in _EMPTY_FACTORIES and (not value.args or name == "defaultdict")
    return False


def _first_use_test(test, names) -> Optional[str]:
    """``key not in NAME`` (alone or as an operand of ``or``/``and``): the
    registry it asks about."""
    tests = test.values if type(test) is ast.BoolOp else [test]
    for t in tests:
        if type(t) is ast.Compare and len(t.ops) == 1 and type(t.ops[0]) is ast.NotIn \
                and type(t.comparators[0]) is ast.Name and t.comparators[0].id in names:
            return t.comparators[0].id
    return None


def _fills(body, name, ctx) -> bool:
    """Whether ``body`` adds an entry to ``name`` that no collective makes."""
    adds = False
    for stmt in body:
        for node in fast_walk(stmt):
            if type(node) is ast.Call:
                raw = dotted(node.func)
                if raw and ctx.match_collective(node, raw, canonical_text(raw, ctx.imports)) is not None:
                    return False
                if type(node.func) is ast.Attribute and node.func.attr in _ADDERS \
                        and type(node.func.value) is ast.Name and node.func.value.id == name:
                    adds = True
            elif type(node) is ast.Assign:
                for target in node.targets:
                    if type(target) is ast.Subscript and type(target.value) is ast.Name and target.value.id == name:
                        adds = True
    return adds


# -- caches of a class, filled by a collective on first use ----------------------------------


def first_use_collectives(ctx) -> dict:
    """{line of an ``if``: its source} for the first-use tests of the file's
    class-level caches whose fill issues a collective.

    A class attribute that starts empty (``_group_cache = {}`` in the class
    body) and that a method fills under ``if key not in Cls._group_cache``
    (or ``self._group_cache``) with what a collective makes
    (``dist.new_group(ranks)``, a communicator's ``Dup()``) holds what this
    process's instances asked for so far.  The collective then runs where
    this process first asks -- inside the schedule, at a point each rank
    reaches at its own time, or never on a rank that does not use the
    instance -- while every rank of the group must issue it, in the same
    order (Megatron-LM's pipeline bridge, 88f1a126: the fix creates every
    bridge subgroup eagerly at construction).  The module-level tables of
    :func:`lazy_registries` whose entries a collective makes are left out
    there: they are filled by set-up functions that every rank calls alike
    (DeepSpeed's expert groups), where the first-use test of a class-level
    cache is consulted from the instance's own methods as they run."""
    found = ctx.__dict__.get("_first_use_collectives")
    if found is not None:
        return found
    found = {}
    for cls in ctx.tree.body:
        if type(cls) is not ast.ClassDef:
            continue
        empty = _empty_class_attributes(cls)
        if not empty:
            continue
        for func in cls.body:
            if type(func) not in (ast.FunctionDef, ast.AsyncFunctionDef):
                continue
            for node in own_nodes(func):
                if type(node) is not ast.If:
                    continue
                name = _class_first_use_test(node.test, cls.name, empty)
                if name is not None and _fills_by_collective(node.body, cls.name, name, ctx):
                    found[node.lineno] = source(KIND_LAZY_REGISTRY, f"{cls.name}.{name}", ctx.path, node.lineno,
                                                ALL_MODES_ALL_DIMS)
    ctx.__dict__["_first_use_collectives"] = found
    return found


def first_use_source(ctx, test_stmt) -> frozenset:
    """The source of an ``if`` that tests a class-level cache for a key its
    arm then makes by a collective (:func:`first_use_collectives`); empty otherwise."""
    if type(test_stmt) is not ast.If:
        return EMPTY
    found = first_use_collectives(ctx).get(test_stmt.lineno)
    return frozenset((found,)) if found is not None else EMPTY


def _empty_class_attributes(cls: ast.ClassDef) -> frozenset:
    return _names_bound_empty(cls.body)


def _class_attribute(expr, class_name: str, names: frozenset) -> Optional[str]:
    """``Cls.name`` or ``self.name`` / ``cls.name`` for one of ``names``."""
    if type(expr) is ast.Attribute and expr.attr in names and type(expr.value) is ast.Name \
            and expr.value.id in (class_name, "self", "cls"):
        return expr.attr
    return None


def _class_first_use_test(test, class_name: str, names: frozenset) -> Optional[str]:
    """``key not in Cls.NAME`` (alone or as an operand of ``or``/``and``): the cache it asks about."""
    tests = test.values if type(test) is ast.BoolOp else [test]
    for t in tests:
        if type(t) is ast.Compare and len(t.ops) == 1 and type(t.ops[0]) is ast.NotIn:
            name = _class_attribute(t.comparators[0], class_name, names)
            if name is not None:
                return name
    return None


def _fills_by_collective(body, class_name: str, name: str, ctx) -> bool:
    """Whether ``body`` stores into the cache ``name`` what a collective makes
    (``Cls.name[key] = dist.new_group(...)``)."""
    for stmt in body:
        if type(stmt) is not ast.Assign or type(stmt.value) is not ast.Call:
            continue
        if not any(type(t) is ast.Subscript and _class_attribute(t.value, class_name, frozenset((name,)))
                   for t in stmt.targets):
            continue
        raw = dotted(stmt.value.func)
        if raw and ctx.match_collective(stmt.value, raw, canonical_text(raw, ctx.imports)) is not None:
            return True
    return False
