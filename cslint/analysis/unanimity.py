"""Unanimity tests: whether every rank of a group gathered this rank's own
value (issue 14, cause 4: values made uniform by a collective).

``all(v == mine for v in gathered)``, where ``gathered`` holds nothing but
what a gather of ``mine`` over a group brought in, is true on a rank exactly
when every rank of the group holds the same ``mine``; then it is true on all
of them, and where they differ it is false on all of them: the test is what
the gather made, uniform over its group, whatever ``mine`` is.  A test
``and``-ed to it that reads nothing but ``mine`` (``mine is not None and
all(...)``) is as uniform: where the ranks agree it reads one value, and
where they do not the unanimity test makes the whole ``and`` false on every
rank.  Its negation written out, ``any(v != mine for v in gathered)``, is
as uniform (true on every rank where some rank holds another value, false
on all of them where none does), and so is a test ``or``-ed to it that
reads nothing but ``mine`` (``mine is None or any(...)``): where the ranks
differ the ``any`` makes the whole ``or`` true on every rank.
``any(v == mine ...)``, ``all(v != mine ...)``, a test reading another
value, or a gathered list that also holds anything else stay what they
read."""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import holds_kind, walk as fast_walk, walked
from .scope import canonical_text
from .syntax import dotted, unparse

_CALLS = frozenset({ast.Call})


#: the builtin that makes a unanimity test and the comparison it must make
#: of each gathered value with the own one: ``all(==)`` or its negation ``any(!=)``
_UNANIMITY_TESTS = {"all": ast.Eq, "any": ast.NotEq}
#: the boolean operator under which operands reading only the own value leave
#: each unanimity test deciding (where the ranks differ, ``all`` is False and ``any`` True)
_DECIDING_OPERATOR = {"all": ast.And, "any": ast.Or}


def _compared(call: ast.AST) -> Optional[tuple]:
    """``(own value expression, iterable)`` of ``all(v == x for v in xs)``
    or ``any(v != x for v in xs)`` (either side of the comparison, a
    generator or a list comprehension of one plain loop without conditions,
    ``x`` not naming ``v``); else None."""
    if type(call) is not ast.Call or type(call.func) is not ast.Name or call.func.id not in _UNANIMITY_TESTS \
            or len(call.args) != 1 or call.keywords:
        return None
    comparison = _UNANIMITY_TESTS[call.func.id]
    made = call.args[0]
    if type(made) not in (ast.GeneratorExp, ast.ListComp) or len(made.generators) != 1:
        return None
    loop = made.generators[0]
    test = made.elt
    if loop.ifs or loop.is_async or type(loop.target) is not ast.Name or type(test) is not ast.Compare \
            or len(test.ops) != 1 or type(test.ops[0]) is not comparison:
        return None
    name = loop.target.id
    left, right = test.left, test.comparators[0]
    own = right if type(left) is ast.Name and left.id == name else \
        left if type(right) is ast.Name and right.id == name else None
    if own is None or name in _names(own):
        return None
    return own, loop.iter


def _names(expr: ast.AST) -> set:
    return {node.id for node in walked(expr) if type(node) is ast.Name}


def unanimity_read(reader, name: str, call: ast.Call, env) -> Optional[frozenset]:
    """What ``all(v == mine for v in gathered)`` (or ``any(v != mine for v
    in gathered)``) depends on when every element of ``gathered`` is a
    gather's result of ``mine`` itself, over one group: that collective's
    result (uniform over the group); else None."""
    if name not in _UNANIMITY_TESTS:
        return None
    found = _compared(call)
    if found is None:
        return None
    own, iterable = found
    gathered = reader.eval(iterable, env)
    groups = {atom.group for atom in gathered if atom.tag == "C"}
    if len(groups) != 1 or any(atom.tag != "C" for atom in gathered) or not _gathers(reader, own, iterable):
        return None
    return reader.atoms.collective(groups.pop(), reader.eval(own, env))


def _gathers(reader, own: ast.AST, iterable: ast.AST) -> bool:
    """Whether the function fills the name ``iterable`` by a gather whose
    contribution is ``own`` as written (``dist.all_gather_object(gathered,
    mine, group=g)``): the list holds what every rank of the group gave."""
    if type(iterable) is not ast.Name:
        return False
    info = reader.info
    text = unparse(own)
    for node in fast_walk(info.func):
        if type(node) is not ast.Call or len(node.args) < 2 or type(node.args[0]) is not ast.Name \
                or node.args[0].id != iterable.id or unparse(node.args[1]) != text:
            continue
        raw = dotted(node.func)
        match = info.ctx.match_collective(node, raw, canonical_text(raw, info.ctx.imports)) if raw else None
        if match is not None and "gather" in match.name:
            return True
    return False


def unanimous_values(reader, expr: ast.BoolOp, env) -> list:
    """The operands of ``expr`` that decide it: of ``a and all(v == mine
    for v in gathered)`` or ``a or any(v != mine for v in gathered)``,
    where ``a`` calls nothing and reads no name that ``mine`` does not, the
    unanimity test alone (:func:`unanimity_read`); else all of them."""
    values = expr.values
    for value in values:
        found = _compared(value)
        if found is None or type(expr.op) is not _DECIDING_OPERATOR[value.func.id]:
            continue
        allowed = _names(found[0])
        others = [other for other in values if other is not value]
        if all(not holds_kind(other, _CALLS) and _names(other) <= allowed
               for other in others) and unanimity_read(reader, value.func.id, value, env) is not None:
            return [value]
    return values
