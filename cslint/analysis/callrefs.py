"""References to functions: what a call or a collective site calls.

A call's ``ref`` (:class:`~cslint.analysis.records.Site`,
:class:`~cslint.analysis.atoms.CallResult`, :class:`~cslint.analysis.atoms.RaisedBy`)
names its callee as far as one file can tell; the whole-tree pass
(:mod:`cslint.analysis.resolution`) resolves it to the functions of the tree
it may run.  Each reference is a ``NamedTuple`` whose first item is its kind
as a word (``"func"``, ``"method"``, ...), made like the value atoms
(:func:`cslint.analysis.atoms.made`: one object per distinct reference while
a file is extracted, built and unpickled from one tuple of its items), so it
is picklable, hashable and read by name:

============================  ==============================================
reference                     what is called
============================  ==============================================
:class:`FuncRef`              a function of a module
:class:`ClassRef`             a class of the same file (its constructor)
:class:`QualRef`              a dotted name through the imports
:class:`MethodRef`            ``self.name()``, overrides included
:class:`SuperRef`             ``super().name()``
:class:`FieldMethodRef`       ``self.attr.name()``
:class:`TypedMethodRef`       ``x.name()`` where the function shows what ``x`` is
:class:`PartRef`              one element of what calling another reference
                              returns, or its own structure (:data:`OWN_PART`)
:class:`ParamCallRef`         a parameter holding a class, called
:class:`NameRef`              ``anything.name()``: the one method of that name
============================  ==============================================

:func:`element` and :func:`own_results` read a value's call results by part
(:class:`PartRef`).
"""

from __future__ import annotations

import ast
from typing import NamedTuple, Optional

from .astwalk import positional_parameters
from .atoms import made, made_from_one_tuple, with_ref

#: The arguments of a call as a method found by its name alone is matched
#: against them (``receivers.binds``): ``(positional, keywords)``, the number
#: of positional arguments (-1 where it unpacks some) and the keyword names,
#: sorted (None where it spreads a mapping); this one says nothing.
ANY_ARGUMENTS = (-1, None)


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
    #: what the call passes (:data:`ANY_ARGUMENTS`, ``call_shape``): where
    #: nothing types the field, a method found by its name alone must bind it
    shape: tuple = ANY_ARGUMENTS


class TypedMethodRef(NamedTuple):
    """``x.name()`` where the function shows what ``x`` is: ``terms`` are its
    type terms (:mod:`cslint.analysis.receivers`), resolved to classes by the
    whole-tree pass."""

    tag: str  # "typed"
    name: str
    terms: tuple
    #: what the call passes: where the terms say nothing, a method found by
    #: its name alone must bind it
    shape: tuple = ANY_ARGUMENTS


class PartRef(NamedTuple):
    """Element ``index`` of what calling ``ref`` returns (``a, b = f()``,
    ``f()[1]``): the callee's returns at that position where every return
    of its writes out a tuple of that length, else its whole result."""

    tag: str  # "part"
    index: int
    ref: tuple


class ParamCallRef(NamedTuple):
    """``factory(...)`` where ``factory`` is parameter ``index`` of the
    function ``key``: the constructors of the classes of the tree that
    every call of that function passes there, if each does pass one
    (:mod:`cslint.analysis.classargs`)."""

    tag: str  # "paramcall"
    key: str
    index: int


class ChosenClassRef(NamedTuple):
    """``cls(...)`` where ``cls`` is a local every binding of which names a
    class (``W = CpuWorker if use_cpu() else Worker``): the constructors of
    ``refs`` (class references, :func:`class_ref` or :func:`qual_ref`) where
    each is a class of the tree (:mod:`cslint.analysis.classargs`)."""

    tag: str  # "chosen"
    refs: tuple


class NameRef(NamedTuple):
    """``anything.name()`` on a receiver nothing is known about: the one
    method of that name in the tree, if unique."""

    tag: str  # "name"
    name: str
    #: what the call passes (:data:`ANY_ARGUMENTS`): a method that cannot be
    #: called so is not the one called
    shape: tuple = ANY_ARGUMENTS


#: The reference classes, made from one tuple of their items as the value atoms are.
REF_CLASSES = (FuncRef, ClassRef, QualRef, MethodRef, SuperRef, FieldMethodRef, TypedMethodRef, PartRef,
               ParamCallRef, ChosenClassRef, NameRef)
made_from_one_tuple(REF_CLASSES)


def func_ref(module: str, qualname: str) -> FuncRef:
    return made(FuncRef, ("func", module, qualname))


def class_ref(key: str) -> ClassRef:
    return made(ClassRef, ("class", key))


def qual_ref(dotted: str) -> QualRef:
    return made(QualRef, ("qual", dotted))


def param_call_ref(key: str, index: int) -> ParamCallRef:
    return made(ParamCallRef, ("paramcall", key, index))


def chosen_class_ref(refs: tuple) -> ChosenClassRef:
    return made(ChosenClassRef, ("chosen", refs))


def method_ref(class_key: str, name: str) -> MethodRef:
    return made(MethodRef, ("method", class_key, name))


def super_ref(class_key: str, name: str) -> SuperRef:
    return made(SuperRef, ("super", class_key, name))


def field_method_ref(class_key: str, attr: str, name: str, shape: tuple = ANY_ARGUMENTS) -> FieldMethodRef:
    return made(FieldMethodRef, ("fieldmethod", class_key, attr, name, shape))


def typed_method_ref(name: str, terms: tuple, shape: tuple = ANY_ARGUMENTS) -> TypedMethodRef:
    return made(TypedMethodRef, ("typed", name, terms, shape))


def name_ref(name: str, shape: tuple = ANY_ARGUMENTS) -> NameRef:
    return made(NameRef, ("name", name, shape))


def ref_name(ref) -> Optional[str]:
    """The name a call through ``ref`` names last (``event_loop`` of
    ``scheduler.event_loop()``, of ``self.event_loop()``, of
    ``mod.Scheduler.event_loop()``); None for a constructor or a class a
    caller hands in."""
    tag = ref.tag
    if tag in ("method", "super", "fieldmethod", "typed", "name"):
        return ref.name
    if tag == "qual":
        return ref.dotted.rsplit(".", 1)[-1]
    if tag == "func":
        return ref.qualname.rsplit(".", 1)[-1]
    if tag == "part":
        return ref_name(ref.ref)
    return None


#: The index of a :class:`PartRef` that stands for the own structure of what
#: the call returns (its None-ness, length, kind), not an element of it: a
#: function handing back a list it filled by ``append`` returns a list of
#: the same length on every rank whatever each element is
#: (``Variant.return_own``); the whole result where nothing is kept apart.
OWN_PART = -1


def part_ref(index: int, ref) -> PartRef:
    return made(PartRef, ("part", index, ref))


def element(index: int, atoms: frozenset, splits) -> frozenset:
    """Element ``index`` of a value (a tuple unpacked, or indexed with a
    constant): the result of a call whose callee writes out the tuples it
    returns (``splits(ref)``) becomes that element of what the call returns;
    everything else keeps what the whole value depends on.  (One atom per
    element costs the whole-tree pass as much as a call of its own, so only
    the calls that can tell their elements apart get them.)"""
    parted = _results_part(atoms, splits, index)
    return atoms if parted is None else parted


def own_results(atoms: frozenset, returns_own) -> Optional[frozenset]:
    """``atoms`` with each result of a call of a function that hands back a
    container whose own structure is kept apart (``returns_own(ref)``:
    ``ModuleContext.returns_own_structure``) read as that own structure alone
    (``part_ref(OWN_PART, ref)``: its None-ness and length, not its
    elements'); None where ``atoms`` holds no such result."""
    return _results_part(atoms, returns_own, OWN_PART)


def _results_part(atoms: frozenset, has_parts, part) -> Optional[frozenset]:
    """``atoms`` with each result of a call whose callee ``has_parts(ref)``
    read as its ``part`` (``part_ref``); None where there is none."""
    split = None
    for atom in atoms:
        if atom.tag == "R" and atom.ref.tag not in _WHOLE_RESULTS and has_parts(atom.ref):
            if split is None:
                split = []
            split.append(atom)
    if split is None:
        return None
    return atoms.difference(split).union([with_ref(atom, part_ref(part, atom.ref)) for atom in split])


#: Call references whose result :func:`element` and :func:`own_results` leave whole.
_WHOLE_RESULTS = frozenset({"class", "part"})


#: Reference kinds whose call passes the receiver as the first parameter
#: (or builds it: a parameter or a local holding a class, called).
THROUGH_INSTANCE = frozenset({"method", "super", "fieldmethod", "typed", "name", "paramcall", "chosen"})


def call_offset(site, target) -> int:
    """1 where the call ``site`` does not pass ``target`` (a function's
    facts) its instance (:func:`ref_offset`), else 0."""
    return ref_offset(site.ref, target)


def ref_offset(ref, target) -> int:
    """1 where a call through ``ref`` does not pass ``target`` (a function's
    facts) its first parameter as an argument: a call through an object
    (``obj.method()``), of a class (``Cls()`` runs ``__init__`` on a new
    object) or of a classmethod through its class (``Cls.build(x)``,
    ``FuncFacts.bound_by_class``: ``x`` is the second parameter, the class
    the first), else 0: a plain function, a staticmethod, and a method named
    through its class, ``Base.__init__(self, x)`` included, take the object
    as the first argument written."""
    tag = ref.tag
    if tag in THROUGH_INSTANCE or tag == "class":
        return 1
    if tag != "qual":
        return 0
    if target.bound_by_class:
        return 1
    return 1 if target.qualname.endswith("__init__") and not ref.dotted.endswith(".__init__") else 0


def receiver_shift(target, offset: int) -> int:
    """How many of ``target``'s leading parameters (a function's facts or
    info) a call's positional arguments skip: its receiver (``self_offset``:
    ``self``, or a classmethod's ``cls``) where the call passes that apart
    (``offset``, :func:`call_offset`: ``self.m(x)`` binds ``x`` to the
    second parameter), else none.  Parameter ``index`` takes the positional
    argument ``index - receiver_shift(target, offset)``."""
    return target.self_offset if offset else 0


def _declared(func, decorator: str) -> bool:
    """Whether ``func`` is decorated by the builtin ``decorator`` (a bare name)."""
    for d in getattr(func, "decorator_list", ()):  # (asked of every method: a loop, no generator)
        if type(d) is ast.Name and d.id == decorator:
            return True
    return False


def is_classmethod(func) -> bool:
    """Whether a method is declared a ``classmethod``: its first parameter is its class."""
    return _declared(func, "classmethod")


def is_staticmethod(func) -> bool:
    """Whether a method is declared a ``staticmethod``: a call through an object passes it no receiver."""
    return _declared(func, "staticmethod")


def receiver_param(func) -> Optional[str]:
    """The parameter a call of the method ``func`` binds to what it is made
    through, not to an argument: its first positional parameter, the object
    (``self``) or, for a classmethod (:func:`is_classmethod`), the class
    (``cls``); None for a ``staticmethod`` or one without parameters.  The
    caller says whether ``func`` is a method (defined in a class body)."""
    return None if is_staticmethod(func) else first_positional_param(func)


def first_positional_param(func) -> Optional[str]:
    """The first positional parameter of ``func`` (positional-only ones
    first), whatever its decorators say: the object a per-class reader of
    methods takes stores into, a staticmethod's ``obj`` handed ``self``
    (``Cls._fill(self, ...)``) included, so that no store into the object
    is missed; None where it has no positional parameter."""
    first = func.args.posonlyargs or func.args.args
    return first[0].arg if first else None


def positional_params(func, through_object: bool) -> list:
    """The names of ``func``'s positional parameters that a call's
    positional arguments bind, in order: past its receiver
    (:func:`receiver_param`) where the call is made through an object or
    class (``self.m(x)``), from the first for a staticmethod or a plain call."""
    names = [a.arg for a in positional_parameters(func.args)]
    return names[1:] if through_object and receiver_param(func) is not None else names
