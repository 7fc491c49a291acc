"""Local dicts written out as displays: each key's value keeps its own structure.

A function often sorts a list into a few named lists and tests each one::

    by_kind = {
        kind: [a for a in candidates if a.kind == kind]
        for kind in ("reduce", "gather")
    }
    gathers = by_kind["gather"]
    if gathers:                          # reads how many, not what they hold
        tune(gathers)

The dataflow already keeps one value per key read with a constant key
(``("key", name, k)``, :class:`~cslint.analysis.flows.Flow`), but that
value is all of it: the elements' contents too, so a candidate that holds
this rank's id makes ``if gathers:`` differ.  Here each such key also keeps
its value's own structure apart, ``(KEY_OWN, name, k)``: what decides its
None-ness, length and kind (a comprehension's generators and filters, a list
written out's tests), as a comprehension bound to a name keeps it
(``("own", name)``).  A name bound to ``d["k"]`` then keeps that own
structure apart (``entries.key_read_own``), and is a container where the
value under the key is one by construction.

Only a name whose every binding is a dict display or comprehension, and
whose every other mention is ``x = d["k"]``, counts (:func:`plain_dicts`):
nothing stores into it, mutates a value in it in place (``d["k"].append``)
or hands it elsewhere, so what its keys hold is what the display wrote.
"""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import plain_bindings, scoped_walk, walked
from .atoms import EMPTY, whole
from .environment import fork
from .ownstructure import constant_keyed

#: the first item of the dataflow key of a dict key's own structure
KEY_OWN = "key-own"

_BUILT = (ast.List, ast.Dict, ast.Set, ast.Tuple, ast.ListComp, ast.DictComp, ast.SetComp)
_DISPLAYS = (ast.Dict, ast.DictComp)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def key_own_entry(name: str, key: str) -> tuple:
    """The dataflow key under which the own structure of ``name[key]`` is kept."""
    return (KEY_OWN, name, key)


def _constant_key(node) -> Optional[str]:
    key = node.slice
    return key.value if type(key) is ast.Constant and type(key.value) is str else None


def plain_dicts(reads) -> dict:
    """name -> the displays it is bound to: the local names of the function
    ``reads`` (a :class:`~cslint.analysis.structure.StructureReads`) reads,
    every binding of which is a plain ``name = {...}`` or
    ``name = {k: v for ...}`` statement of its own body
    (:func:`~cslint.analysis.astwalk.plain_bindings`: no parameter, ``global``
    or ``nonlocal`` name, a ``nonlocal`` of a nested definition too) and every
    other mention of which is the value of an assignment ``x = name["k"]`` (a
    constant string key), in a nested definition too where that one reads
    this function's name.  A nested definition that binds the name itself (a
    parameter, an assignment) has a name of its own: its bindings are not
    this function's and its mentions are of its own.  Computed once."""
    info = reads.info
    found = info.__dict__.get("_plain_dicts")
    if found is not None:
        return found
    func = info.func
    # (a module's names: other functions may change them; a lambda binds
    # nothing; a name read with a constant key and bound to a container
    # somewhere, else none: no walk)
    if type(func) not in _FUNCTIONS or not info.dict_keys or info.dict_keys.keys().isdisjoint(
            reads._own_containers()):
        found = info.__dict__["_plain_dicts"] = {}
        return found
    bound = plain_bindings(func, _is_display)
    found = {}
    if bound:
        allowed = {id(statement.targets[0]) for statements in bound.values() for statement in statements}
        mentions = []
        for node, visible in scoped_walk(func, frozenset(bound)):
            t = type(node)
            if t is ast.Name:
                if node.id in visible:
                    mentions.append(node)
            elif t is ast.Assign:
                value = node.value
                if type(value) is ast.Subscript and type(value.value) is ast.Name and _constant_key(value) is not None:
                    allowed.add(id(value.value))
        spoilt = {node.id for node in mentions if id(node) not in allowed}
        found = {name: tuple(statement.value for statement in statements)
                 for name, statements in bound.items() if name not in spoilt}
    info.__dict__["_plain_dicts"] = found
    return found


def _is_display(value) -> bool:
    return type(value) in _DISPLAYS


def keyed_containers(reads) -> frozenset:
    """The names bound to ``d["k"]`` (:func:`plain_dicts`) where every
    display ``d`` is bound to holds a container written out under ``"k"``
    (a display, a comprehension), or is a comprehension whose value is one:
    their truth is whether they are empty.  Computed once."""
    info = reads.info
    found = info.__dict__.get("_keyed_containers")
    if found is not None:
        return found
    dicts = plain_dicts(reads)
    out, spoilt = set(), set()
    if dicts:
        containers = set()  # id() of the names bound to a container
        for node in walked(info.func):
            t = type(node)
            if t is ast.Name and type(node.ctx) is not ast.Load and id(node) not in containers:
                spoilt.add(node.id)  # bound to anything else too: ``xs = by_op["k"]; xs = xs[0]``
            elif t is ast.arg:
                spoilt.add(node.arg)
            elif t is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name:
                value = node.value
                if type(value) is ast.Subscript:
                    base, key = value.value, _constant_key(value)
                    displays = dicts.get(base.id) if type(base) is ast.Name else None
                    if displays and key is not None and all(type(_value_under(d, key)) in _BUILT for d in displays):
                        containers.add(id(node.targets[0]))
                        out.add(node.targets[0].id)
                elif type(value) in _BUILT:
                    containers.add(id(node.targets[0]))
    found = info.__dict__["_keyed_containers"] = frozenset(out - spoilt)
    return found


def _value_under(display, key: str):
    """The value expression ``display`` holds under ``key`` (None: none written)."""
    if type(display) is ast.DictComp:
        return display.value
    for k, v in zip(display.keys, display.values):
        if type(k) is ast.Constant and k.value == key:
            return v
    return None


def value_own(evaluator, value, env: dict, implicit: frozenset) -> frozenset:
    """The own structure of ``value`` held under a key: the tests alone for a
    list or tuple written out or a display with constant keys, a
    comprehension's generators, a container's own part kept apart; else its
    whole value."""
    t = type(value)
    if (t is ast.Tuple or t is ast.List) and not any(type(e) is ast.Starred for e in value.elts) \
            or constant_keyed(value):
        return implicit
    own = evaluator.comprehension_length(value, env) if t is ast.ListComp else evaluator.kept_apart(value, env)
    return (evaluator.eval(value, env) if own is None else own) | implicit


def display_keys(evaluator, targets, value, implicit: frozenset, flow) -> None:
    """``name = {"k": v, ...}`` or ``name = {k: v for ...}``: each key read
    later gets its own value, and where the name is a plain dict
    (:func:`plain_dicts`) that value's own structure too."""
    keys_read = flow.dict_keys
    if not keys_read:
        return
    names = [t.id for t in targets if type(t) is ast.Name and t.id in keys_read]
    if not names:
        return
    plain = plain_dicts(evaluator)
    env = flow.env
    if type(value) is ast.DictComp:
        if not any(name in plain for name in names):
            return
        inner = fork(env)
        # which entries there are (the generators, filters and keys) and what one entry's value is made of
        present = evaluator.generated(value, inner)
        present = present | whole(evaluator.eval(value.key, inner))
        own = value_own(evaluator, value.value, inner, implicit) | present
        for name in names:
            if name in plain:
                for key in keys_read[name]:
                    flow.write(key_own_entry(name, key), own)
        return
    if any(k is None or not isinstance(k, ast.Constant) for k in value.keys):
        return  # ``**other`` or computed keys: every key may hold anything
    literal = {k.value: v for k, v in zip(value.keys, value.values)}
    for name in names:
        for key in keys_read[name]:
            part = literal.get(key)
            flow.write(("key", name, key), (evaluator.eval(part, env) if part is not None else EMPTY) | implicit)
            if name in plain:
                flow.write(key_own_entry(name, key),
                           value_own(evaluator, part, env, implicit) if part is not None else implicit)


def key_read_local_own(evaluator, base, key: str, env: dict) -> Optional[frozenset]:
    """The own structure of ``base[key]``, ``base`` a plain local dict
    (:func:`plain_dicts`) the dataflow keeps that key's own structure of;
    None otherwise."""
    if type(base) is not ast.Name or base.id not in plain_dicts(evaluator):
        return None
    return env.get(key_own_entry(base.id, key))
