"""What every ``return`` of a function writes out, where a caller reads the
parts of its result apart: a tuple of one length (``return count, agreed``,
``a, b = f()``: ``Variant.return_parts`` by position) or a dict display
with the same constant string keys (``return {"sizes": n, "offsets": o}``,
``f()["sizes"]``: ``Variant.return_keys``), or a list written out (``xs =
f(); xs[i] = v`` replaces an element: ``lists.list_index_stores``).  Read off
the syntax, once per function (``ModuleContext.returns_tuples``,
``returns_dicts``, ``returns_lists``).
"""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import BLOCKS_OF, iter_children

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _one_return_shape(function, shape_of):
    """The one shape, ``shape_of(value)``, of every ``return`` statement of
    ``function`` with a value (``None`` aside), or None where they differ or
    one is a value no caller can read apart (``shape_of`` gives None)."""
    shapes = set()
    stack = list(function.body)
    while stack:
        node = stack.pop()
        t = type(node)
        if t is ast.FunctionDef or t is ast.AsyncFunctionDef or t is ast.ClassDef:
            continue
        if t is ast.Return:
            value = node.value
            if value is None or (type(value) is ast.Constant and value.value is None):
                continue
            shape = shape_of(value)
            if shape is None:
                return None
            shapes.add(shape)
            continue
        for name in BLOCKS_OF[t]:
            block = getattr(node, name, None)
            if block:
                stack.extend(block)
    return next(iter(shapes)) if len(shapes) == 1 else None


def _tuple_length(value) -> Optional[int]:
    if type(value) is not ast.Tuple or not value.elts or any(type(e) is ast.Starred for e in value.elts):
        return None
    return len(value.elts)


def _constant_keys(value) -> Optional[frozenset]:
    if type(value) is not ast.Dict or not value.keys \
            or any(type(k) is not ast.Constant or type(k.value) is not str for k in value.keys):
        return None  # ``**other`` or a computed key
    return frozenset(k.value for k in value.keys)


def returns_one_tuple_shape(function) -> bool:
    """Whether each ``return`` statement of ``function`` with a value
    (``None`` aside) writes out a tuple of one length, with no starred
    element."""
    return _one_return_shape(function, _tuple_length) is not None


def returns_one_dict_shape(function) -> frozenset:
    """The keys, where each ``return`` statement of ``function`` with a
    value (``None`` aside) writes out a dict display with the same constant
    string keys, and no ``**other``; else none."""
    return _one_return_shape(function, _constant_keys) or frozenset()


def displays_list(value) -> bool:
    """A list written out: a display, a comprehension, or ``[x] * n``."""
    t = type(value)
    if t is ast.List or t is ast.ListComp:
        return True
    if t is ast.BinOp and type(value.op) is ast.Mult:
        return type(value.left) in (ast.List, ast.ListComp) or type(value.right) in (ast.List, ast.ListComp)
    return False


def returns_only_lists(function) -> bool:
    """Whether every ``return`` of ``function`` (one at least, nested
    definitions left out) writes out a list (:func:`displays_list`)."""
    found = False
    stack = list(function.body)
    while stack:
        node = stack.pop()
        t = type(node)
        if t in _DEFINITIONS:
            continue
        if t is ast.Return:
            if node.value is None or not displays_list(node.value):
                return False
            found = True
            continue
        if t is ast.Yield or t is ast.YieldFrom:
            return False
        stack.extend(iter_children(node))
    return found
