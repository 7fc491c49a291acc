"""What the syntax says of a value's own structure (its None-ness, length,
kind and keys, apart from its elements): a function returning a display, a
dict display or a read with constant keys, a scalar's kind, and a loop over
a dict's keys that stores only under the keys it draws."""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import CHILDREN, DEFINITIONS, LOOPS, walk as fast_walk


def returns_own_structure(function, adders) -> bool:
    """Whether some ``return`` statement of ``function`` hands back a value
    whose own structure (None-ness, length, kind) is kept apart from its
    elements': a list, tuple or comprehension written out, or a local name
    the function stores an element into (``out.append(x)``, ``out[k] = x``,
    a method of ``adders``), a local name bound to a list comprehension (its
    own structure is its generators') or the ``*args`` parameter (a tuple as
    long as the positional arguments its callers write out).  A caller's read
    of the result's own structure then reads that part alone
    (``Variant.return_own``)."""
    stored = set()
    returned = set()
    vararg = getattr(function.args, "vararg", None) if hasattr(function, "args") else None
    if vararg is not None:
        stored.add(vararg.arg)
    stack = list(function.body)
    while stack:
        node = stack.pop()
        t = type(node)
        if t is ast.FunctionDef or t is ast.AsyncFunctionDef or t is ast.ClassDef or t is ast.Lambda:
            continue
        if t is ast.Return:
            value = node.value
            if type(value) in (ast.List, ast.Tuple, ast.ListComp) or type(value) is ast.Dict and value.keys \
                    and all(k is not None for k in value.keys):  # (entries.returned_by_key: as many keys as written)
                return True
            if type(value) is ast.Name:
                returned.add(value.id)
        elif t is ast.Call:
            func = node.func
            if type(func) is ast.Attribute and func.attr in adders and type(func.value) is ast.Name:
                stored.add(func.value.id)
        elif t is ast.Subscript and type(node.ctx) is ast.Store and type(node.value) is ast.Name:
            stored.add(node.value.id)
        elif t is ast.Assign and type(node.value) is ast.ListComp:
            stored.update(target.id for target in node.targets if type(target) is ast.Name)
        read = CHILDREN[t]  # (iter_children's read written out: no call but the reader's)
        if read is not None:
            stack += read(node)
    return not returned.isdisjoint(stored)


def constant_keyed(value) -> bool:
    """A dict display whose keys are all string constants written out
    (``{"tp": n, "pp": m}``; no ``**other``, no computed key): its length
    and kind are the code's."""
    return type(value) is ast.Dict and bool(value.keys) \
        and all(type(k) is ast.Constant and type(k.value) is str for k in value.keys)


def constant_key_read(value) -> Optional[str]:
    """The key of ``base["k"]`` (a constant string key, ``base`` a name or a
    call): a name bound to it keeps the value's own structure apart where a
    call returned that value under the key (``entries.key_read_own``).  None
    for any other value."""
    if type(value) is not ast.Subscript or type(value.value) not in (ast.Name, ast.Call):
        return None
    key = value.slice
    return key.value if type(key) is ast.Constant and type(key.value) is str else None


#: the builtin conversions to a scalar: what they return is of that type, whatever they convert
_SCALAR_CONVERSIONS = frozenset({"int", "float", "bool", "str", "complex"})


def scalar_kind(expr) -> Optional[str]:
    """The scalar type a literal (not None) or a builtin conversion
    (``int(x)``) makes, else None."""
    t = type(expr)
    if t is ast.Constant:
        return None if expr.value is None else type(expr.value).__name__
    if t is ast.Call and type(expr.func) is ast.Name and expr.func.id in _SCALAR_CONVERSIONS:
        return expr.func.id
    return None


def _iterated_keys_of(loop) -> Optional[tuple]:
    """``for k in d`` / ``for k in d.keys()`` / ``for k, v in d.items()``:
    (``d``, ``k``); None for any other loop."""
    it, target = loop.iter, loop.target
    if type(it) is ast.Call and not it.args and not it.keywords and type(it.func) is ast.Attribute \
            and it.func.attr in ("keys", "items"):
        if it.func.attr == "items":
            if type(target) is not ast.Tuple or len(target.elts) != 2:
                return None
            target = target.elts[0]
        it = it.func.value
    if type(it) is not ast.Name or type(target) is not ast.Name:
        return None
    return it.id, target.id


def existing_key_stores_of(loop) -> tuple:
    """The ``d[k] = v`` targets (their id()) of a loop over ``d``'s keys whose
    ``k`` is the key the loop drew, and whether every iteration draws what
    ``d`` held on entry to the loop (the body changes ``d`` by those stores
    alone, each under a key already drawn, and only reads it otherwise).
    Such a store replaces the value under a key ``d`` already has: ``d``'s
    own structure (its keys, its length) is what it was, whoever stores (a
    rank test around it decides the value, never the key set).  A store of a new key would end the loop with an error, so there is
    none to miss.  The key must still be the one drawn: neither name is bound
    anew before the store in the body, nor anywhere in an inner loop holding
    the store (whose way back reaches it again without the header)."""
    found = _iterated_keys_of(loop)
    if found is None:
        return (), False
    names = set(found)
    container, key = found
    rebinds = []  # (line, column) of each binding of either name in the body
    stores = []  # (store node, the inner loops holding it)
    # (node, the inner loops holding it); a nested scope may rebind either name (nonlocal): not judged
    stack = [(statement, ()) for statement in loop.body]
    while stack:
        node, loops = stack.pop()
        t = type(node)
        if t in DEFINITIONS:
            return (), False
        if t is ast.Name and type(node.ctx) is not ast.Load and node.id in names:
            rebinds.append((node.lineno, node.col_offset))
        if t is ast.Subscript and type(node.ctx) is ast.Store and type(node.value) is ast.Name \
                and node.value.id == container and type(node.slice) is ast.Name and node.slice.id == key:
            stores.append((node, loops))
        inner = loops + (node,) if t in LOOPS else loops
        read = CHILDREN[t]  # (iter_children's read written out: no generator resumed per child)
        if read is not None:
            stack += [(child, inner) for child in read(node)]
    out = []
    for store, loops in stores:
        at = (store.lineno, store.col_offset)
        if any(place < at for place in rebinds):
            continue
        if any(_inside(place, inner) for inner in loops for place in rebinds):
            continue
        out.append(id(store))
    return tuple(out), len(out) == len(stores) and _only_reads_and_stores(loop.body, container, set(out))


#: methods of a dict that read it: any other method called on it may change what a loop draws
_DICT_READS = frozenset({"get", "keys", "items", "values", "copy"})


def _only_reads_and_stores(body: list, container: str, stores: set) -> bool:
    """Whether ``body`` changes ``container`` only by ``stores``: no other
    store or deletion under a key, no binding anew, no method but a read
    (``d.update(...)``, ``d.pop(k)``).  Handing it to a call is a read, as
    everywhere in the value model."""
    for node in fast_walk(ast.Module(body=body, type_ignores=[])):
        t = type(node)
        if t is ast.Name and node.id == container and type(node.ctx) is not ast.Load:
            return False
        if t is ast.Subscript and type(node.ctx) is not ast.Load and type(node.value) is ast.Name \
                and node.value.id == container and id(node) not in stores:
            return False
        if t is ast.Attribute and type(node.value) is ast.Name and node.value.id == container \
                and node.attr not in _DICT_READS:
            return False
    return True


def _inside(place: tuple, node) -> bool:
    end = (getattr(node, "end_lineno", None) or node.lineno, getattr(node, "end_col_offset", None) or 0)
    return (node.lineno, node.col_offset) <= place <= end
