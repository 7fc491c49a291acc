"""Returns that differ only in whether a value is there.

A function whose every ``return`` but one hands back None (or a tuple of
Nones: ``return None, None``) and whose one other ``return`` hands back a
value (``return batch, stats``) tells its caller, by what it returns, which
way it went only through the result's None-ness.  A caller that finds the
result (or an element of it) not None knows that the one ``return`` of a
value ran, so what it holds there is what that return's expression held,
whatever the tests choosing between the returns decided
(``if stop: return None, None`` reaches ``batch`` only as ``batch is
None``).

The callee keeps that apart (``Variant.return_present``:
:func:`present_returned`); a caller's ``if x is None`` edge on which ``x``
is not None reads each call result ``x`` holds as that part
(:func:`present_edges`, :func:`present`).  On the other edge, and before
the test, the result keeps its tests: a rank that finds None leaves where
the others go on.
"""

from __future__ import annotations

import ast
from typing import Optional

from . import cfg as cfgmod
from .astwalk import own_returns, own_yields
from .atoms import EMPTY, with_ref
from .callrefs import part_ref
from .environment import fork
from .presence import none_test

#: the first item of a part index (``callrefs.PartRef.index``) that stands for
#: what a result holds where it is not None: ``(PRESENT, i)`` for element
#: ``i`` of a returned tuple, ``(PRESENT, None)`` for the whole result
PRESENT = "present"

#: the part index of the whole result where it is not None
WHOLE_PRESENT = (PRESENT, None)



def present_index(index) -> tuple:
    return (PRESENT, index)


def is_present_index(index) -> bool:
    return type(index) is tuple and index[0] == PRESENT


def _none_kind(value) -> Optional[str]:
    """"none" for a ``return`` of None (bare too), "tuple" for a tuple of
    Nones written out, None for any other value."""
    if value is None or (type(value) is ast.Constant and value.value is None):
        return "none"
    if type(value) is ast.Tuple and value.elts \
            and all(type(e) is ast.Constant and e.value is None for e in value.elts):
        return "tuple"
    return None


def value_return(info) -> Optional[tuple]:
    """``(return, whole)`` where the ``return`` statement is the only one of
    the function of ``info`` (nested definitions left out, no ``yield``)
    that hands back anything but None or a tuple of Nones, and some other
    one hands back such; ``whole``: whether every other return hands back
    None itself (a tuple of Nones is not None: only its elements tell the
    ways apart).  Worked out once per function: its statements first, its
    expressions (for a ``yield``) only where the returns fit."""
    known = info.__dict__.get("_value_return", info)
    if known is not info:
        return known
    found = info.__dict__["_value_return"] = _value_return(info.func)
    return found


def _value_return(function) -> Optional[tuple]:
    found = None
    kinds = set()
    for node in own_returns(function):
        kind = _none_kind(node.value)
        if kind is not None:
            kinds.add(kind)
        elif found is not None:
            return None
        else:
            found = node
    if found is None or not kinds or own_yields(function):  # (a generator is never None)
        return None
    return found, kinds == {"none"}


def present_returned(evaluator, s: ast.Return, env: dict, whole: bool, regular: frozenset) -> tuple:
    """``(whole, parts)`` of the one ``return`` of a value (:func:`value_return`)
    as read where the caller finds it not None: its value and elements as
    the expression holds them, without the tests that chose this return
    (``whole`` None where a return of a tuple of Nones leaves the result's
    own None-ness saying nothing; ``parts`` None where it writes out no
    tuple).  ``regular``: what the return adds to the result otherwise;
    where that is nothing (a single-rank path), so is this."""
    value = s.value
    parts = None
    if type(value) is ast.Tuple and not any(type(e) is ast.Starred for e in value.elts):
        parts = tuple(evaluator.eval(e, env) if regular else EMPTY for e in value.elts)
    atoms = (frozenset().union(*parts) if parts is not None else evaluator.eval(value, env)) if regular else EMPTY
    return (atoms if whole else None), parts


def add_returned(variant, evaluator, s: ast.Return, env: dict, returned: tuple,
                 none: Optional[frozenset] = None) -> None:
    """Add to ``variant`` what ``return`` statement ``s`` hands back
    (``returned``: :meth:`~cslint.analysis.transfer.Transfer.returned`), what
    decides whether that is None (``none``: :meth:`~cslint.analysis.transfer.Transfer.returned_none`) and,
    where it is the one return of a value (:func:`value_return`), that
    value as a caller that finds it not None reads it."""
    variant.add_return_none(none, returned[0], returned[2] if len(returned) > 2 else None)
    variant.add_return(*returned)
    found = value_return(evaluator.info)
    if found is not None and found[0] is s:
        variant.add_present(*present_returned(evaluator, s, env, found[1], returned[0]))


def present_part(variant, index: tuple) -> Optional[frozenset]:
    """Part ``index`` (``(PRESENT, i)``) of ``variant``'s ``return_present``; None where it keeps none."""
    present = variant.return_present
    if present is None or index[1] is None:
        return None if present is None else present[0]
    parts = present[1]
    return parts[index[1]] if parts is not None and index[1] < len(parts) else None


def present_edges(dataflow) -> dict:
    """{(if test, successor): name} for the edge of ``if x is None`` (or
    ``is not None``) on which the local name ``x`` is not None; only for a
    name the dataflow keeps nothing apart for (no element store, no key read)."""
    out = {}
    info = dataflow.info
    for node in dataflow.graph.nodes:
        stmt = node.stmt
        if node.kind != cfgmod.TEST or type(stmt) is not ast.If or type(stmt.test) is not ast.Compare:
            continue
        tested = none_test(stmt.test)
        if tested is None or tested[0] in info.element_stores or tested[0] in info.dict_keys:
            continue
        name, holds_when_none = tested
        present_label = not holds_when_none
        for succ, label in node.succs:
            if label is present_label and not any(s == succ and seen is not label for s, seen in node.succs):
                out[node.id, succ] = name
    return out


def present(name: str, out: dict) -> dict:
    """``out`` where ``name`` is not None: each call result it holds (whole,
    or an element by position) reads as its present part."""
    atoms = out.get(name)
    if not atoms:
        return out
    changed = None
    for atom in atoms:
        if atom.tag != "R":
            continue
        ref = atom.ref
        if ref.tag == "part":
            if type(ref.index) is not int or ref.index < 0:
                continue
            new_ref = part_ref(present_index(ref.index), ref.ref)
        elif ref.tag == "class":
            continue
        else:
            new_ref = part_ref(present_index(None), ref)
        if changed is None:
            changed = {}
        changed[atom] = with_ref(atom, new_ref)
    if changed is None:
        return out
    refined = fork(out)
    refined[name] = frozenset(changed.get(atom, atom) for atom in atoms)
    return refined
