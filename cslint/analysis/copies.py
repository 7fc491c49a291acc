"""A name or field rebound to the object it already holds, moved or copied.

``model = model.to("meta")`` places the same object elsewhere;
``self.session = dataclasses.replace(self.session, loaded=True)`` copies it
with some of its fields changed (``vocabulary.COPIES_WITH_CHANGES``): the
result is an object of the same class, never None where the old one was not
(where it was, the call raises).  Where only some ranks rebind it, their
test decides where the object is and what it holds (its contents), not its
structure: its None-ness, type and length are what they were on every rank.
"""

from __future__ import annotations

import ast

from .scope import canonical_text
from .syntax import dotted
from .vocabulary import COPIES_WITH_CHANGES, PLACEMENT_METHODS


def copies_itself(value, target, imports) -> bool:
    """Whether ``value`` is the object ``target`` (a plain name or an
    attribute of a plain name, ``self.session``) holds, placed elsewhere
    (``x.to(device)``, ``x.cuda()``) or copied with changes
    (``dataclasses.replace(x, n=1)``, its first argument)."""
    if type(value) is not ast.Call:
        return False
    func = value.func
    if type(func) is ast.Attribute and func.attr in PLACEMENT_METHODS:
        return _same_place(func.value, target)
    if not value.args or not _same_place(value.args[0], target):
        return False
    text = dotted(func)
    return text is not None and canonical_text(text, imports) in COPIES_WITH_CHANGES


def _same_place(expr, target) -> bool:
    """``expr`` names what ``target`` names: the same plain name, or the
    same attribute of the same plain name."""
    kind = type(target)
    if kind is ast.Name:
        return type(expr) is ast.Name and expr.id == target.id
    return kind is ast.Attribute and type(expr) is ast.Attribute and expr.attr == target.attr \
        and type(target.value) is ast.Name and type(expr.value) is ast.Name and expr.value.id == target.value.id

