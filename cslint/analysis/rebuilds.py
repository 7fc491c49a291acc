"""A field rebuilt from its own settings: ``part = Impl(size=self.layer.size,
dtype=self.layer.dtype); part.weight = merged; self.layer = wrap(part)``.

Where the method runs on some ranks only, ``self.layer`` holds another object
there, and a read of ``self.layer.x`` reads that test through the field's
structure (which object it holds).  The object built for the write is held by
nothing but the field: the local it is bound to is only stored into
(``part.weight = ...``) and handed to the write's value (itself, or a call
that wraps it), once.  So whoever reads the new object reads it through
``self.layer``, whose table keeps the test; what the construction's own
arguments read of the field need not carry it into the class family's field
tables, which every object of the family reads (a layer elsewhere in the tree
that never held the rebuilt object).  Those arguments read the field's
structure from every write of it but such rebuilds (:data:`REBUILT_APART`),
as an attribute of a field some method clears reads it from every write but
the None ones (``presentfields.py``).

A callee of the write's value that keeps what it is handed elsewhere (a
registry) is not looked for: the callee may be a library's.
"""

from __future__ import annotations

import ast
from typing import NamedTuple, Optional

from .astwalk import BLOCKS_OF, DEFINITIONS, walked
from .atoms import REBUILT_APART
from .records import written_variants


class Rebuilds(NamedTuple):
    """The rebuilds of a method's fields (:func:`rebuilds_of`)."""

    reads: frozenset  # id() of the ``self.F`` reads in a rebuild's construction
    #: id() of the rebuilding ``self.F = ...`` statements -> the :class:`RebuiltObject` each writes
    writes: dict


class RebuiltObject(NamedTuple):
    """What a rebuild writes to its field (``FieldWrite.rebuilt``): the object ``built`` (a callee reference,
    ``Impl``) makes, as it is (``wrapper`` None) or handed first to ``wrapper`` (a callee reference; ``UNKNOWN``
    where it is handed otherwise) (lackednames.py)."""

    built: Optional[tuple]
    wrapper: object


#: the wrapper of a rebuilt object handed to the write's call otherwise than as its first argument
UNKNOWN = "?"

NO_REBUILDS = Rebuilds(frozenset(), {})



def rebuilt_apart(attr: str) -> str:
    return attr + REBUILT_APART


def rebuilt_objects(funcs, family_of) -> dict:
    """(family, attr) of each field some method rebuilds from its own
    settings -> the objects its rebuilds write (:class:`RebuiltObject`, in
    the order of ``funcs``)."""
    out: dict = {}
    for fn in funcs:
        for v in written_variants(fn):
            for write in v.fields:
                if write.rebuilt:
                    objects = out.setdefault((family_of(write.class_key), write.attr), [])
                    if write.rebuilt not in objects:
                        objects.append(write.rebuilt)
    return out


def candidate(node: ast.Assign, self_name, params) -> bool:
    """Whether ``node`` may rebuild a field: ``self.F = name`` of a local, or
    ``self.F = call(...)`` with arguments (:meth:`FunctionScan.scan_calls`
    notes these; :func:`rebuilds_of` reads them)."""
    value = node.value
    if type(value) is ast.Call:
        if not (value.args or value.keywords):
            return False
    elif type(value) is not ast.Name or value.id in params:
        return False
    if len(node.targets) != 1:
        return False
    target = node.targets[0]
    return type(target) is ast.Attribute and type(target.value) is ast.Name and target.value.id == self_name


def rebuilds_of(info) -> Rebuilds:
    """The rebuilds of ``info``'s fields (kept on it once asked): a
    ``self.F = value`` statement among its candidates whose value is a local
    name, or a call handed the local name, where the function binds that name
    once, by a plain assignment of a call of a class (``Impl(...)``: a class
    the tree defines, or a name spelt as a class), and mentions it nowhere
    else but as the object of an attribute store; with the ``self.F`` reads
    of that construction."""
    known = info._rebuilds
    if known is not None:
        return known
    info._rebuilds = found = _find(info)
    return found


def _find(info) -> Rebuilds:
    handed: dict = {}  # a local name a candidate write hands on -> [(the write, the name's node there)]
    for write in info.rebuild_candidates:
        value = write.value
        for name in [value] if type(value) is ast.Name else [*value.args, *(kw.value for kw in value.keywords)]:
            if type(name) is ast.Name:
                handed.setdefault(name.id, []).append((write, name))
    built = _constructions(info.func.body, handed)  # (few functions get past this: no full walk for the rest)
    self_name = info.self_name
    found = []  # (the write, the name's node there, the construction, its reads of the field)
    for name, writes in handed.items():
        if len(built.get(name, ())) != 1:
            continue  # bound otherwise, or more than once
        (construction,) = built[name]
        for write, node in writes:
            field = write.targets[0].attr
            own = [n for n in walked(construction.value) if type(n) is ast.Attribute and n.attr == field
                   and type(n.value) is ast.Name and n.value.id == self_name and type(n.ctx) is ast.Load]
            if own and _builds_object(info, construction.value):
                found.append((write, node, construction, own))
    if not found:
        return NO_REBUILDS
    mentions: dict = {}  # name -> its Name nodes
    stored_on = set()  # id() of the Name nodes an attribute is stored on (``part.weight = ...``)
    for node in walked(info.func):
        t = type(node)
        if t is ast.Name:
            mentions.setdefault(node.id, []).append(node)
        elif t is ast.Attribute and type(node.ctx) is ast.Store and type(node.value) is ast.Name:
            stored_on.add(id(node.value))
    reads, writes = set(), {}
    for write, node, construction, own in found:
        allowed = {id(construction.targets[0]), id(node)}
        if any(id(m) not in allowed and id(m) not in stored_on for m in mentions.get(node.id, ())):
            continue  # read elsewhere, rebound, or handed on twice
        reads.update(id(n) for n in own)
        value = write.value
        wrapper = None if value is node else info.resolve_ref(value.func) if value.args and value.args[0] is node \
            else UNKNOWN
        writes[id(write)] = RebuiltObject(info.resolve_ref(construction.value.func), wrapper)
    return Rebuilds(frozenset(reads), writes) if writes else NO_REBUILDS


def _constructions(body: list, names: dict) -> dict:
    """name -> the statements of ``body`` (nested blocks too, nested
    definitions left out) assigning a call to it alone, for ``names``."""
    out: dict = {}
    if not names:
        return out
    stack = [body]
    while stack:
        for stmt in stack.pop():
            t = type(stmt)
            if t is ast.Assign:
                targets = stmt.targets
                if len(targets) == 1 and type(targets[0]) is ast.Name and targets[0].id in names \
                        and type(stmt.value) is ast.Call:
                    out.setdefault(targets[0].id, []).append(stmt)
                continue
            if t in DEFINITIONS:
                continue
            for field in BLOCKS_OF[t]:
                inner = getattr(stmt, field)
                if inner:
                    stack.append(inner)
    return out


def _builds_object(info, call: ast.Call) -> bool:
    """Whether ``call`` builds a new object: a call of a class of the module,
    or of a name spelt as a class (``Impl``, ``layers.Impl``)."""
    ref = info.resolve_ref(call.func)
    if ref is not None and ref.tag == "class":
        return True
    func = call.func
    name = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else ""
    return name[:1].isupper() and not name.isupper()

