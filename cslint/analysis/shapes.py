"""What every ``return`` of a function writes out, where a caller reads the
parts of its result apart: a tuple of one length (``return count, agreed``,
``a, b = f()``: ``Variant.return_parts`` by position) or a dict display
with the same constant string keys (``return {"sizes": n, "offsets": o}``,
``f()["sizes"]``: ``Variant.return_keys``), or a list written out (``xs =
f(); xs[i] = v`` replaces an element: ``lists.list_index_stores``).  Read off
the syntax, once per function (``ModuleContext.returns_tuples``,
``returns_dicts``, ``returns_lists``).  Also the one variable every
``return`` names, settled before the first of them
(:func:`settled_returned_name`): which ``return`` a rank takes then decides
nothing of the value it hands back.
"""

from __future__ import annotations

import ast
import functools
import weakref
from typing import Optional

from .astwalk import BLOCKS_OF, CHILDREN, DEFINITIONS, own_returns, own_yields



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
    if type(value) is ast.IfExp:  # ``(0, 1) if group is None else (group.rank, group.size)``
        length = _tuple_length(value.body)
        return length if length is not None and length == _tuple_length(value.orelse) else None
    if type(value) is not ast.Tuple or not value.elts or any(type(e) is ast.Starred for e in value.elts):
        return None
    return len(value.elts)


#: the elements :func:`tuple_elements` made for a conditional expression, kept while it lives
_CHOSEN_ELEMENTS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def tuple_elements(value) -> Optional[list]:
    """The elements, by position, of a tuple a ``return`` writes out: a
    display's own, or, for a conditional expression each arm of which
    writes out a tuple of one length (``(0, 1) if group is None else
    (group.rank_in_group, group.world_size)``), one conditional expression
    per position choosing between the arms' elements there (``1 if group is
    None else group.world_size``): each element holds what its arms hold
    and reads the test, never the other positions.  None for any other
    value."""
    if type(value) is ast.Tuple:
        return None if _tuple_length(value) is None else value.elts
    if type(value) is not ast.IfExp or _tuple_length(value) is None:
        return None
    found = _CHOSEN_ELEMENTS.get(value)
    if found is None:
        found = _CHOSEN_ELEMENTS[value] = [
            ast.copy_location(ast.IfExp(test=value.test, body=body, orelse=orelse), value)
            for body, orelse in zip(tuple_elements(value.body), tuple_elements(value.orelse))]
    return found


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


def returned_tuple_length(function) -> int:
    """The length of the tuple every ``return`` statement of ``function``
    with a value writes out (:func:`returns_one_tuple_shape`); 0 where they
    do not."""
    return _one_return_shape(function, _tuple_length) or 0


def returns_one_dict_shape(function) -> frozenset:
    """The keys, where each ``return`` statement of ``function`` with a
    value (``None`` aside) writes out a dict display with the same constant
    string keys, and no ``**other``; else none."""
    return _one_return_shape(function, _constant_keys) or frozenset()


def _computed_keys(value) -> Optional[bool]:
    if type(value) is not ast.Dict or not value.keys or any(k is None for k in value.keys) \
            or _constant_keys(value) is not None:
        return None  # ``**other``, or every key a constant string (returns_one_dict_shape)
    return True


def returns_computed_key_dicts(function) -> bool:
    """Whether each ``return`` statement of ``function`` with a value
    (``None`` aside) writes out a dict display with some computed key
    (``{(p_dtype, g_dtype): buckets}``) and no ``**other``: its keys are
    data, but each value it holds is one written out there
    (``entries.ANY_VALUE_OWN``)."""
    return _one_return_shape(function, _computed_keys) is not None


def loop_values_name(loop) -> Optional[str]:
    """The name ``for k, v in d.items()`` or ``for v in d.values()`` binds to
    a value of ``d`` (``d`` a name or a call, no argument), else None."""
    it, target = loop.iter, loop.target
    if type(it) is not ast.Call or it.args or it.keywords or type(it.func) is not ast.Attribute \
            or type(it.func.value) not in (ast.Name, ast.Call):
        return None
    if it.func.attr == "items" and type(target) is ast.Tuple and len(target.elts) == 2:
        target = target.elts[1]
    elif it.func.attr != "values":
        return None
    return target.id if type(target) is ast.Name else None


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
    returns = own_returns(function)
    for node in returns:
        if node.value is None or not displays_list(node.value):
            return False
    return bool(returns) and not own_yields(function)


#: builtins that read a sequence and never change it: a call of one may read
#: a returned name (``tuple(xs)``) without unsettling it
_READING_BUILTINS = frozenset({"tuple", "list", "len", "sorted", "reversed", "enumerate", "zip", "iter", "any",
                               "all", "isinstance", "set", "frozenset", "sum", "min", "max", "bool"})
#: the parents under which a name is only read
_READS = (ast.Return, ast.For, ast.AsyncFor, ast.comprehension, ast.Compare, ast.BoolOp, ast.UnaryOp, ast.If,
          ast.IfExp, ast.While, ast.Assert, ast.FormattedValue)


@functools.lru_cache(maxsize=256)
def settled_returned_name(function) -> Optional[str]:
    """The one name every ``return`` of ``function`` hands back, where that
    name is a parameter the body never binds, or a local bound only by plain
    assignments that are statements of the body itself (outside branches,
    loops, ``try`` and ``with``) before the first ``return``, and nothing
    changes it after: no store into it, no attribute or method of it, no call
    but a builtin's that only reads it (``tuple(xs)``), no other name bound to
    it.  Whichever ``return`` a rank takes then hands back the same value, so
    the tests choosing one decide nothing of it (the caller learns from them
    only whether the function returned at all).  None otherwise."""
    returns = []
    names = []  # (an ast.Name, the node holding it)
    stack = [(node, None) for node in function.body]
    while stack:
        node, parent = stack.pop()
        t = type(node)
        if t in DEFINITIONS:
            continue
        if t is ast.Name:
            names.append((node, parent))
            continue
        if t is ast.Return:
            if type(node.value) is not ast.Name:
                return None
            returns.append(node)
        read = CHILDREN[t]  # (iter_children's read written out: no generator resumed per child)
        if read is not None:
            stack += [(child, node) for child in read(node)]
    if not returns:
        return None
    name = returns[0].value.id
    if any(r.value.id != name for r in returns):
        return None
    first = min(r.lineno for r in returns)
    top = {id(s) for s in function.body if type(s) is ast.Assign and s.lineno < first and len(s.targets) == 1}
    args = function.args
    local = any(a.arg == name for a in (*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs) if a)
    for node, parent in names:
        if node.id != name:
            continue
        if type(node.ctx) is not ast.Load:
            if id(parent) not in top:
                return None
            local = True
        elif not (type(parent) in _READS or type(parent) is ast.Call and node in parent.args
                  and type(parent.func) is ast.Name and parent.func.id in _READING_BUILTINS):
            return None
    return name if local else None  # (a module's global may change in a call between the returns)
