"""Methods a method binds on one side of a size test of a group.

``if self.dist.pp_size > 1: self.loop = self._loop_pp`` / ``else: self.loop =
self._loop``: where that binding is the only way the class hands the method
on in its file, ``self._loop`` runs only where the pipeline group has one
rank and ``self._loop_pp`` only where it has several
(:attr:`~cslint.analysis.records.FuncFacts` ``single_rank_bindings`` and its
sibling, read by :mod:`cslint.analysis.program` and
:mod:`cslint.analysis.processes`).  One walk of the method's body finds both
sides (:func:`side_bindings`); the ``self`` attributes its module reads as a
value are worked out once per module (:func:`handed_methods`).
"""

from __future__ import annotations

import ast
from typing import Optional

from ..presets import group_from_text
from .astwalk import BLOCKS_OF, walked
from .function import FunctionInfo
from .grouptests import is_size_expr, several_rank_side, single_rank_side
from .scope import ModuleContext
from .syntax import dotted


def side_bindings(info: FunctionInfo) -> tuple:
    """(single, several, calls): ``((method, group), ...)`` of the methods of its
    class this method binds only on the side of a size test that a group
    of one rank takes (``if self.dist.pp_size > 1: self.loop =
    self._loop_pp`` / ``else: self.loop = self._loop``), where that binding
    is the only way the method's own class hands it on in the file (no
    other ``self._loop`` read as a value): such a method runs only where
    the group has one rank (see :attr:`Program.single_rank_dims`); and the
    same of the side where the group has several ranks (``self._loop_pp``
    above; a plain size comparison,
    :func:`~cslint.analysis.grouptests.several_rank_side`): such a method runs
    only there (see :mod:`cslint.analysis.processes`); and, of any function,
    the methods it calls as a statement of their own on the single-rank side
    only (``elif get_parallel().pp_size > 1: scheduler.event_loop_pp() else:
    scheduler.event_loop()``; :func:`called_only_there`).  One walk of the
    body finds all three."""
    method = bool(info.class_key) and info.self_offset == 1 and bool(info.params)
    self_name = info.params[0] if method else None
    single: list = []
    several: list = []
    calls: list = []
    _scan_bindings(info, self_name, info.body, "", "", single, several, calls)
    if not method:
        return (), (), called_only_there(info, calls)
    return (_handed_only_there(info, self_name, single), _handed_only_there(info, self_name, several),
            called_only_there(info, calls))


def asserted_single_groups(info: FunctionInfo) -> tuple:
    """The named parallel groups the function asserts to have one rank
    before it does anything else (``assert self.pp_group.world_size == 1``
    among the ``assert`` statements that open its body, a docstring
    aside): a group's size is the same on every rank, so where the group
    has several ranks every rank raises there, and whatever the rest of the
    body runs, it runs only where the group has one rank (see
    :attr:`Program.single_rank_dims`).  An assert after any other statement
    guards only what follows it, so it is not read."""
    body = info.body
    start = 1 if body and type(body[0]) is ast.Expr and type(body[0].value) is ast.Constant \
        and isinstance(body[0].value.value, str) else 0
    groups = []
    for stmt in body[start:]:
        if type(stmt) is not ast.Assert:
            break
        if single_rank_side(stmt.test, info.ctx.size_reads) is True:
            group = _sized_group(stmt.test, info.ctx.group_word)
            if group is not None:
                groups.append(group)
    return tuple(sorted(set(groups)))


def called_only_there(info: FunctionInfo, calls: list) -> tuple:
    """The ``(method, side)`` of the calls ``calls`` (found on one side of a
    test: a single-rank side's group, or the field whose presence it tests,
    :mod:`~cslint.analysis.rootside`) whose method the function names nowhere
    else, nested functions included: no other call of it, and no read of it
    as a value (``target=scheduler.loop``).  Walked only where such a call
    was found."""
    if not calls:
        return ()
    wanted = {name for name, _group in calls}
    named: dict = {}
    for node in walked(info.func):  # nested functions and lambdas too: a mention there counts
        if type(node) is ast.Attribute and node.attr in wanted:
            named[node.attr] = named.get(node.attr, 0) + 1
    counts: dict = {}
    for name, _group in calls:
        counts[name] = counts.get(name, 0) + 1
    return tuple(sorted({(name, group) for name, group in calls if named.get(name) == counts[name]}))


def handed_methods(info: FunctionInfo) -> frozenset:
    """The names of the ``self`` attributes the function's module reads as
    a value (``Thread(target=self._poll)``, ``self.loop = self._loop_pp``):
    a method read so may be called from anywhere the value reaches."""
    return frozenset(attr for attr, reads in _method_values(info.ctx, info.params[0]).items() if reads)


def _handed_only_there(info: FunctionInfo, self_name: str, found: list) -> tuple:
    """The ``(attr, group)`` of the bindings ``found`` whose attribute the
    module reads as a value nowhere but in them."""
    if not found:
        return ()
    escapes = _method_values(info.ctx, self_name)
    bound = {id(node) for node, _group in found}
    return tuple(sorted({(node.attr, group) for node, group in found
                         if all(other in bound for other in escapes.get(node.attr, ()))}))


def _scan_bindings(info: FunctionInfo, self_name: Optional[str], stmts, single_group: str, several_group: str,
                   single: list, several: list, calls: list) -> None:
    """Append ``(self.attr node, group)`` for each ``x = self.attr`` among
    ``stmts`` on the single-rank side of a size test of ``group`` to
    ``single``, and on its several-rank side to ``several`` (``*_group``:
    the group of the side the statements are on, "" for none); and
    ``(method, group)`` for each ``recv.method(...)`` made as a statement of
    its own (or returned) on the single-rank side to ``calls``."""
    for stmt in stmts:
        t = type(stmt)
        if t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            continue
        if t is ast.Expr or t is ast.Return:
            value = stmt.value
            if single_group and type(value) is ast.Call and type(value.func) is ast.Attribute:
                calls.append((value.func.attr, single_group))
            continue
        if t is ast.Assign:
            if self_name is not None and (single_group or several_group):
                # ``self._loop``, or either of ``self._a if flag else self._b``
                values = [stmt.value]
                while values:
                    value = values.pop()
                    if type(value) is ast.IfExp:
                        values += [value.body, value.orelse]
                    elif type(value) is ast.Attribute and type(value.value) is ast.Name \
                            and value.value.id == self_name:
                        if single_group:
                            single.append((value, single_group))
                        if several_group:
                            several.append((value, several_group))
            continue
        if t is ast.If:
            sizes = info.ctx.size_reads
            one = single_rank_side(stmt.test, sizes)
            many = several_rank_side(stmt.test, sizes)
            named = _sized_group(stmt.test, info.ctx.group_word) if one is not None or many is not None else None
            _scan_bindings(info, self_name, stmt.body, single_group or (named if one is True else ""),
                           several_group or (named if many is True else ""), single, several, calls)
            _scan_bindings(info, self_name, stmt.orelse, single_group or (named if one is False else ""),
                           several_group or (named if many is False else ""), single, several, calls)
            continue
        # an ``except`` handler or a ``match`` case is walked like a statement: its body is its block
        for name in BLOCKS_OF[t]:
            inner = getattr(stmt, name)
            if inner:
                _scan_bindings(info, self_name, inner, single_group, several_group, single, several, calls)


def _sized_group(test: ast.expr, group_of=group_from_text) -> Optional[str]:
    """The named parallel group whose size a single-rank test reads (``pp``
    for ``self.dist.pp_size > 1``); None for the world or an unnamed one."""
    sized = test.operand if type(test) is ast.UnaryOp else test
    if type(sized) is not ast.Compare:
        return None
    text = dotted(sized.left if is_size_expr(sized.left) else sized.comparators[0])
    group = group_of(text) if text else None
    return None if group == "world" else group


def _method_values(ctx: ModuleContext, self_name: str) -> dict:
    """attr -> ids of the ``self.attr`` reads of the module that hand the
    attribute on as a value (not a call of it, not a read of one of its own
    attributes): worked out once per module, and only for a module where a
    method is bound on a single-rank side."""
    cache = getattr(ctx, "_method_values", None)
    if cache is None:
        cache = ctx._method_values = {}
    if self_name in cache:
        return cache[self_name]
    skip = set()
    out: dict = {}
    for node in walked(ctx.tree):
        t = type(node)
        if t is ast.Call:
            skip.add(id(node.func))
        elif t is ast.Attribute:
            skip.add(id(node.value))
            inner = node.value
            if type(inner) is ast.Attribute and type(inner.value) is ast.Name and inner.value.id == self_name:
                continue
        if t is ast.Attribute and type(node.value) is ast.Name and node.value.id == self_name \
                and type(node.ctx) is ast.Load:
            out.setdefault(node.attr, []).append(node)
    cache[self_name] = {attr: [id(n) for n in nodes if id(n) not in skip] for attr, nodes in out.items()}
    return cache[self_name]
