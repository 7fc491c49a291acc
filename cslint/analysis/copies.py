"""A name or field rebound to the object it already holds, moved or copied.

``model = model.to("meta")`` places the same object elsewhere;
``self.session = dataclasses.replace(self.session, loaded=True)`` copies it
with some of its fields changed (``vocabulary.COPIES_WITH_CHANGES``), and
``x = x.clone()`` or ``copy.deepcopy(x)`` copies it whole: the result is an
object of the same class with the same keys or shape, None only where the
old one was (a copy with changes of None raises).  Where only some ranks
rebind it, their test decides where the object is and what it holds (its
contents), not its structure: its None-ness, type and length are what they
were on every rank.

``x = F.pad(x, [0, pad])``, ``x = x[:n]`` or ``x = x.narrow(0, 0, n)`` rebinds
the name to a piece of its own object, or to it padded: a value of the same
kind (a tensor of the same element type, on the same device, in the same
layout; a list stays a list), whatever size the ranks' test chose.  Where only
some ranks rebind it, their test decides its size and contents, not its kind
(``resizes_itself``): a later ``x.is_cuda`` or ``x.dtype`` reads what every
rank holds alike.
"""

from __future__ import annotations

import ast
from typing import Optional

from .atoms import CONTENTS, SIZED
from .scope import canonical_text
from .syntax import dotted
from .vocabulary import COPIES_WITH_CHANGES, PADDINGS, PLACEMENT_METHODS, RESIZES_OF_ITSELF


#: methods that hand back a copy of their receiver: an object of its class, as long as it,
#: with the same keys or shape (a named tuple's ``_replace``, a tensor's ``clone``,
#: ``detach`` and ``contiguous``, a container's ``copy``)
COPY_METHODS = frozenset({"_replace", "clone", "detach", "contiguous", "copy"})

#: library calls that copy their first argument whole (canonical names): ``copy.copy(None)``
#: is None, so what they return has the argument's own structure
WHOLE_COPIES = frozenset({"copy.copy", "copy.deepcopy"})


def copies_itself(value, target, imports) -> bool:
    """Whether ``value`` is the object ``target`` (a plain name or an
    attribute of a plain name, ``self.session``) holds, placed elsewhere
    (``x.to(device)``, ``x.cuda()``), copied (``x.clone()``,
    ``copy.deepcopy(x)``) or copied with changes (``x._replace(n=1)``,
    ``dataclasses.replace(x, n=1)``, its first argument)."""
    if type(value) is not ast.Call:
        return False
    func = value.func
    if type(func) is ast.Attribute and (func.attr in PLACEMENT_METHODS or func.attr in COPY_METHODS):
        return _same_place(func.value, target)
    if not value.args or not _same_place(value.args[0], target):
        return False
    text = dotted(func)
    if text is None:
        return False
    text = canonical_text(text, imports)
    return text in COPIES_WITH_CHANGES or text in WHOLE_COPIES


def resizes_itself(value, target, imports) -> bool:
    """Whether ``value`` is the object ``target`` (a plain name or an
    attribute of a plain name) holds, cut or padded into a value of its own
    kind: a slice of it (``x[:n]``, ``x[a:b, :]``), a method of it that cuts
    or reshapes (``x.narrow(0, 0, n)``, ``x.view(-1)``:
    :data:`~.vocabulary.RESIZES_OF_ITSELF`), or torch's padding of it
    (``F.pad(x, pad)``, its first argument)."""
    kind = type(value)
    if kind is ast.Subscript:
        return _slices(value.slice) and _same_place(value.value, target)
    if kind is not ast.Call:
        return False
    func = value.func
    if type(func) is ast.Attribute and func.attr in RESIZES_OF_ITSELF:
        if _same_place(func.value, target):
            return True
    if not value.args or not _same_place(value.args[0], target):
        return False
    text = dotted(func)
    return text is not None and canonical_text(text, imports) in PADDINGS


def rebinding_reach(value, target, imports, declared: frozenset) -> Optional[str]:
    """What a test deciding which ranks bind the plain name ``target`` to
    ``value`` reaches of it, as a transform: its contents where ``value`` is
    its own object placed elsewhere or copied (:func:`copies_itself`), or
    the name is one ``declared`` to hold one object of one class; its size
    and contents where ``value`` is its own value cut or padded
    (:func:`resizes_itself`); None for all of it."""
    if copies_itself(value, target, imports) or target.id in declared:
        return CONTENTS
    return SIZED if resizes_itself(value, target, imports) else None


def _slices(index) -> bool:
    """Whether a subscript's index only slices (``[:n]``, ``[a:b, :]``),
    picking no element (``x[0]`` is another object)."""
    if type(index) is ast.Slice:
        return True
    return type(index) is ast.Tuple and bool(index.elts) and all(type(e) is ast.Slice for e in index.elts)


def _same_place(expr, target) -> bool:
    """``expr`` names what ``target`` names: the same plain name, or the
    same attribute of the same plain name."""
    kind = type(target)
    if kind is ast.Name:
        return type(expr) is ast.Name and expr.id == target.id
    return kind is ast.Attribute and type(expr) is ast.Attribute and expr.attr == target.attr \
        and type(target.value) is ast.Name and type(expr.value) is ast.Name and expr.value.id == target.value.id

