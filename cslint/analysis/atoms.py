"""Typed atoms: the symbolic values of the per-file facts.

The divergence of an expression is a frozenset of atoms, resolved by the
whole-tree pass (:mod:`cslint.analysis.program`) once every file is known.
Each atom is a ``NamedTuple`` whose first item is a one-letter tag, so atoms
stay plain tuples for pickling, hashing and comparison (two atoms of
different kinds never compare equal), and read by name everywhere:

============================  ====  =============================================
atom                          tag   meaning
============================  ====  =============================================
:class:`Source`               S     a rank-local source; ``dims`` is a tuple of
                                    ``(mode, frozenset(dims))`` pairs (``'*'`` =
                                    every mode)
:class:`Param`                P     the function's parameter at ``index``
:class:`FieldRead`            F     the field ``self.attr`` of a class
:class:`GlobalRead`           G     a module-level variable
:class:`CallResult`           R     the result of a call to an analysed
                                    function; ``fallback`` is used when ``ref``
                                    does not resolve (an opaque call depends on
                                    its receiver and arguments)
:class:`CollectiveResult`     C     the result of a collective over ``group``:
                                    uniform over the group whatever ``inner`` is
:class:`RaisedBy`             E     an exception from a call to an analysed
                                    function: rank-local only if the callee can
                                    raise (decided by the whole-tree pass)
============================  ====  =============================================

References to functions (``ref`` of a call or site) are typed the same way:
:class:`FuncRef`, :class:`ClassRef`, :class:`QualRef`, :class:`MethodRef`,
:class:`SuperRef`, :class:`FieldMethodRef`, :class:`TypedMethodRef` and
:class:`NameRef`.

The constructors (``source(...)``, ``param(...)``, ...) build the tuples
without the keyword handling of a NamedTuple's own ``__new__``: atoms are made
by the hundred thousand on a large tree.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

EMPTY: frozenset = frozenset()

_new = tuple.__new__


# -- atoms ----------------------------------------------------------------------


class Source(NamedTuple):
    tag: str  # "S"
    kind: str
    text: str
    path: str
    line: int
    dims: tuple  # ((mode, frozenset(dims)), ...)


class Param(NamedTuple):
    tag: str  # "P"
    index: int


class FieldRead(NamedTuple):
    tag: str  # "F"
    class_key: Optional[str]
    attr: str


class GlobalRead(NamedTuple):
    tag: str  # "G"
    module: str
    name: str


class CallResult(NamedTuple):
    tag: str  # "R"
    ref: tuple
    args: tuple  # atoms per positional argument
    kwargs: tuple  # (keyword, atoms) pairs
    fallback: frozenset
    path: str
    line: int
    text: str
    depth: int


class CollectiveResult(NamedTuple):
    tag: str  # "C"
    group: str
    inner: frozenset
    depth: int


class RaisedBy(NamedTuple):
    tag: str  # "E"
    ref: tuple
    path: str
    line: int
    text: str


def source(kind: str, text: str, path: str, line: int, dims: tuple) -> Source:
    return _new(Source, ("S", kind, text, path, line, dims))


def param(index: int) -> Param:
    return _new(Param, ("P", index))


def field_read(class_key: Optional[str], attr: str) -> FieldRead:
    return _new(FieldRead, ("F", class_key, attr))


def global_read(module: str, name: str) -> GlobalRead:
    return _new(GlobalRead, ("G", module, name))


def call_result(ref, args, kwargs, fallback, path, line, text, depth) -> CallResult:
    return _new(CallResult, ("R", ref, args, kwargs, fallback, path, line, text, depth))


def collective_result(group: str, inner: frozenset, depth: int) -> CollectiveResult:
    return _new(CollectiveResult, ("C", group, inner, depth))


def raised_by(ref, path: str, line: int, text: str) -> RaisedBy:
    return _new(RaisedBy, ("E", ref, path, line, text))


# -- references to functions --------------------------------------------------


class FuncRef(NamedTuple):
    """A function of a module (``module``, its qualified name)."""

    tag: str  # "func"
    module: str
    qualname: str


class ClassRef(NamedTuple):
    """A class of the same file, by key (a call constructs it)."""

    tag: str  # "class"
    key: str


class QualRef(NamedTuple):
    """A dotted name through the imports (a function, or a class's constructor)."""

    tag: str  # "qual"
    dotted: str


class MethodRef(NamedTuple):
    """``self.name()`` inside the class ``class_key`` (overrides included)."""

    tag: str  # "method"
    class_key: str
    name: str


class SuperRef(NamedTuple):
    """``super().name()`` inside the class ``class_key``."""

    tag: str  # "super"
    class_key: str
    name: str


class FieldMethodRef(NamedTuple):
    """``self.attr.name()``: a method of whatever class ``self.attr`` holds."""

    tag: str  # "fieldmethod"
    class_key: str
    attr: str
    name: str


class TypedMethodRef(NamedTuple):
    """``x.name()`` where the function shows what ``x`` is: ``terms`` are its
    type terms (:mod:`cslint.analysis.receivers`), resolved to classes by the
    whole-tree pass."""

    tag: str  # "typed"
    name: str
    terms: tuple


class NameRef(NamedTuple):
    """``anything.name()`` on a receiver nothing is known about: the one
    method of that name in the tree, if unique."""

    tag: str  # "name"
    name: str


def func_ref(module: str, qualname: str) -> FuncRef:
    return _new(FuncRef, ("func", module, qualname))


def class_ref(key: str) -> ClassRef:
    return _new(ClassRef, ("class", key))


def qual_ref(dotted: str) -> QualRef:
    return _new(QualRef, ("qual", dotted))


def method_ref(class_key: str, name: str) -> MethodRef:
    return _new(MethodRef, ("method", class_key, name))


def super_ref(class_key: str, name: str) -> SuperRef:
    return _new(SuperRef, ("super", class_key, name))


def field_method_ref(class_key: str, attr: str, name: str) -> FieldMethodRef:
    return _new(FieldMethodRef, ("fieldmethod", class_key, attr, name))


def typed_method_ref(name: str, terms: tuple) -> TypedMethodRef:
    return _new(TypedMethodRef, ("typed", name, terms))


def name_ref(name: str) -> NameRef:
    return _new(NameRef, ("name", name))


#: Reference kinds whose call passes the receiver as the first parameter.
THROUGH_INSTANCE = frozenset({"method", "super", "fieldmethod", "typed", "name"})


# -- nesting of call and collective results ------------------------------------

# Nesting limit for call/collective result atoms.  A loop such as
# ``x = f(x)`` would otherwise build ever deeper atoms; past the limit a call
# result is approximated by its callee's own result plus everything its
# arguments depend on (sound, less precise).
MAX_NESTING = 3


def nesting(atoms: frozenset) -> int:
    deepest = 0
    for atom in atoms:
        tag = atom.tag
        if tag == "R" or tag == "C":
            if atom.depth > deepest:
                deepest = atom.depth
    return deepest


class AtomBuilder:
    """Builds the call and collective result atoms of one file.

    Atom sets share sub-sets (a loop re-reads its own call results), so the
    nested structure is a DAG: flattening each shared part once (a memo keyed
    on object identity, the object kept alive beside its result) keeps it
    linear.  The memo lives as long as the file's extraction."""

    __slots__ = ("_flat",)

    def __init__(self):
        self._flat: dict = {}

    def flatten(self, atoms: frozenset) -> frozenset:
        known = self._flat.get(id(atoms))
        if known is not None:
            owner, result = known
            if owner is atoms:
                return result
        out = set()
        for atom in atoms:
            tag = atom.tag
            if tag == "R":
                out.add(call_result(atom.ref, (), (), EMPTY, atom.path, atom.line, atom.text, 1))
                out |= self.flatten(atom.fallback)
            elif tag == "C":
                out.add(collective_result(atom.group, self.flatten(atom.inner), 1) if atom.depth > 1 else atom)
            else:
                out.add(atom)
        result = frozenset(out)
        self._flat[id(atoms)] = (atoms, result)
        return result

    def call(self, ref, args, kwargs, fallback, path, line, text) -> frozenset:
        """The result of a call to ``ref`` (resolved by the whole-tree pass)."""
        depth = 1 + max([nesting(a) for a in args] + [nesting(a) for _, a in kwargs] + [nesting(fallback)])
        if depth > MAX_NESTING:
            return frozenset({call_result(ref, (), (), EMPTY, path, line, text, 1)}) | self.flatten(fallback)
        return frozenset({call_result(ref, args, kwargs, fallback, path, line, text, depth)})

    def collective(self, group: str, inner: frozenset) -> frozenset:
        """The result of a collective over ``group`` of values ``inner``."""
        # A collective over a group of values some of which already came out of a
        # collective over the same group: those parts are uniform over it either
        # way, so their own inputs stand in for them.  Without this an in-place
        # collective in a loop (``while comm.allreduce(x) > 0: x -= 1``) built a
        # new nested atom per iteration and the dataflow never settled.
        if any(atom.tag == "C" and atom.group == group for atom in inner):
            flat = set()
            stack = list(inner)
            opened = set()  # nested atoms share parts: open each one once
            while stack:
                atom = stack.pop()
                if atom.tag == "C" and atom.group == group:
                    if id(atom.inner) not in opened:
                        opened.add(id(atom.inner))
                        stack.extend(atom.inner)
                else:
                    flat.add(atom)
            inner = frozenset(flat)
        depth = 1 + nesting(inner)
        if depth > MAX_NESTING:
            inner = self.flatten(inner)
            depth = 1 + nesting(inner)
        # a collective over the same group twice is still uniform over it
        if len(inner) == 1:
            (only,) = inner
            if only.tag == "C" and only.group == group:
                return inner
        return frozenset({collective_result(group, inner, depth)})
