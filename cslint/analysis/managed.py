"""A ``with X(...) as v:`` block runs ``X.__enter__`` where it starts and ``X.__exit__`` on every way out of it
(issue 14, recall): where ``X`` is a class of the tree, the collectives those methods reach are issued at the
``with`` statement itself.  Both are modelled as calls made at the statement, after the calls of the item's own
expression (``__exit__`` runs on every exit of the block, an early ``return`` inside it included, so the block's
exits never skip it: only a way around the whole statement does, which is what a call at the statement reads).
The calls are synthetic nodes, ``X(...).__enter__()``, made call sites of the statement's node (not calls of its
own: they are no local work of the statement, and what they raise is not read, as a method no class of the tree
defines would read as unknown code failing on one rank), and resolve
as a method of the class the item's constructor call names, by the same resolution a call uses; a library
context manager, or an item that is not a constructor call, adds nothing."""

from __future__ import annotations

import ast
from typing import Optional

from .callrefs import qual_ref

_PAIRS = {ast.With: ("__enter__", "__exit__"), ast.AsyncWith: ("__aenter__", "__aexit__")}


def context_calls(stmt) -> list:
    """The synthetic ``item(...).__enter__()`` and ``item(...).__exit__()`` calls of a ``with`` statement's items
    that are calls, in the order they run at its start (the exits last, innermost item first)."""
    pair = _PAIRS.get(type(stmt))
    if pair is None:
        return []
    made = [item.context_expr for item in stmt.items if type(item.context_expr) is ast.Call]
    if not made:
        return []
    enter, exit_ = pair
    return [_method_call(expr, enter) for expr in made] + [_method_call(expr, exit_) for expr in reversed(made)]


def _method_call(expr: ast.Call, name: str) -> ast.Call:
    func = ast.copy_location(ast.Attribute(value=expr, attr=name, ctx=ast.Load()), expr)
    func.end_lineno, func.end_col_offset = expr.end_lineno, expr.end_col_offset
    call = ast.copy_location(ast.Call(func=func, args=[], keywords=[]), expr)
    call.end_lineno, call.end_col_offset = expr.end_lineno, expr.end_col_offset
    return call


def context_method_ref(constructor, name: str) -> Optional[tuple]:
    """The reference ``X(...).name()`` leads to, for one of :data:`~cslint.analysis.syntax.CONTEXT_METHODS`, given the reference of the
    constructor call ``X(...)``: the method of that class (a class of the file, or one the imports name);
    None for anything else (a function returning a context manager, a class a caller hands in)."""
    if constructor is None:
        return None
    if constructor.tag == "class":
        module, _, qualname = constructor.key.partition(":")
        return qual_ref(f"{module}.{qualname}.{name}")
    if constructor.tag == "qual":
        return qual_ref(f"{constructor.dotted}.{name}")
    return None
