"""Tests that only ask whether a value is there: ``x is None``, ``not x``,
``len(x) == 0``, a size attribute compared with zero, and a call handed
such a test (a consensus on it)."""

from __future__ import annotations

import ast
from typing import Optional

from .syntax import plain_dotted


def is_none_literal(expr) -> bool:
    """Whether ``expr`` is the literal ``None`` itself."""
    return type(expr) is ast.Constant and expr.value is None


def none_test(test: ast.expr) -> Optional[tuple]:
    """``(name, holds_when_none)`` when ``test`` compares a plain name with
    None: ``x is None`` gives ``("x", True)``, ``x is not None`` ``("x",
    False)``; None for any other test."""
    if type(test) is not ast.Compare or len(test.ops) != 1 or type(test.left) is not ast.Name:
        return None
    right, op = test.comparators[0], type(test.ops[0])
    if type(right) is not ast.Constant or right.value is not None or (op is not ast.Is and op is not ast.IsNot):
        return None
    return test.left.id, op is ast.Is


#: attribute names that count things (a size test reads "is there anything")
_COUNT_WORDS = ("size", "len", "num", "count")


def presence_test(test: ast.expr) -> Optional[tuple]:
    """``(text, holds_when_present)`` when ``test`` only asks whether a value
    is there: ``x``/``not x``, ``x is None``/``is not None``, ``len(x) == 0``
    and ``x.batch_size == 0`` (and their negations); None otherwise.

    What a consensus on such a test does is clear from its shape: a rank
    whose own value is present (or absent) is made to act as if it were not.
    """
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = presence_test(test.operand)
        return None if inner is None else (inner[0], not inner[1])
    text = plain_dotted(test)
    if text is not None:
        return text, True
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "len" \
            and len(test.args) == 1 and plain_dotted(test.args[0]) is not None:
        return plain_dotted(test.args[0]), True
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return None
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if isinstance(op, (ast.Is, ast.IsNot)) and isinstance(right, ast.Constant) and right.value is None:
        text = plain_dotted(left)
        return (text, isinstance(op, ast.IsNot)) if text is not None else None
    if not (isinstance(right, ast.Constant) and right.value in (0, 1) and type(right.value) is int):
        return None
    counted = None
    if isinstance(left, ast.Call) and isinstance(left.func, ast.Name) and left.func.id == "len" and len(left.args) == 1:
        counted = plain_dotted(left.args[0])
    elif isinstance(left, ast.Attribute) and any(word in left.attr.lower() for word in _COUNT_WORDS):
        counted = plain_dotted(left.value)
    if counted is None:
        return None
    zero_when_true = {(ast.Eq, 0), (ast.LtE, 0), (ast.Lt, 1)}
    some_when_true = {(ast.NotEq, 0), (ast.Gt, 0), (ast.GtE, 1)}
    if (type(op), right.value) in zero_when_true:
        return counted, False
    if (type(op), right.value) in some_when_true:
        return counted, True
    return None


def vouched_presence(test: ast.expr) -> Optional[tuple]:
    """``(verdict_label, call, {True: names, False: names})`` for an ``if``
    test that is a call (or its negation) handed a None test of local names:
    ``if not all_ranks_true(group, buffer is not None): return``.
    ``verdict_label`` is the branch label on which the call's result is
    truthy; ``names[v]`` are the names the arguments say are not None when
    the call's result is ``v``.

    Such a call reads as a consensus on what it is handed: its verdict
    vouches for the argument on every rank (``all`` of ``x is not None``
    holding, ``any`` of ``x is None`` failing).  Past it, whether ``x`` is
    None is what that verdict says, agreed wherever the verdict is.  The
    call's own reduction is not read: ``if not any_rank(x is not None)``
    would be taken as the same kind of verdict, though past it only some
    rank need hold ``x``."""
    label = True
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        label = not label
        test = test.operand
    if not isinstance(test, ast.Call):
        return None
    arguments = list(test.args) + [kw.value for kw in test.keywords]
    names = {True: set(), False: set()}
    for value in (True, False):
        for argument in arguments:
            _present_when(argument, value, names[value])
    if not names[True] and not names[False]:
        return None
    return label, test, {value: frozenset(found) for value, found in names.items()}


def _present_when(expr: ast.expr, value: bool, out: set) -> None:
    """Add to ``out`` the local names that are not None wherever ``expr`` is ``value``."""
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
        _present_when(expr.operand, not value, out)
    elif isinstance(expr, ast.BoolOp):
        # every operand of an ``and`` that holds holds; every operand of an ``or`` that fails fails
        if isinstance(expr.op, ast.And) == value:
            for operand in expr.values:
                _present_when(operand, value, out)
    else:
        tested = none_test(expr)
        if tested is not None and tested[1] != value:
            out.add(tested[0])
