"""Tests read off the syntax alone that ask about a group: whether it has
one rank or several (``world_size > 1``, ``tp_group is None``), whether
this rank belongs to it (``rank in ranks``, ``group is None``), and a
rank compared with a number."""

from __future__ import annotations

import ast
from typing import Optional

from ..presets import group_from_text
from ..presets.rank_names import is_size_name, names_world_rank, size_name_is_uniform
from .syntax import dotted


_SIZE_CALLS = {"get_world_size", "Get_size", "size", "get_size", "world_size"}


def is_size_expr(expr: ast.expr, sizes=()) -> bool:
    """Whether ``expr`` reads a group's size (``world_size``,
    ``get_tp_size()``, ``group.size()``); ``sizes``: the module's
    :class:`~cslint.analysis.sizereads.SizeReads` (``self.sync_size`` every
    assignment of which sets a size is one; a size-named local or field
    that holds something else is none: ``dp_size = len(own_requests)``)."""
    if isinstance(expr, ast.Call):
        name = dotted(expr.func) or ""
        last = name.rsplit(".", 1)[-1]
        if last in _SIZE_CALLS or (last.startswith("get_") and size_name_is_uniform(last[4:])) \
                or (last.startswith("_") and size_name_is_uniform(last.lstrip("_"))):
            return True
        # a size read by its name: ``getattr(dist, "tp_size", 1)``, ``size_of(dist, "cp_size")``
        return (last == "getattr" or "size" in last.lower()) and any(
            isinstance(arg, ast.Constant) and isinstance(arg.value, str) and size_name_is_uniform(arg.value)
            for arg in expr.args)
    text = dotted(expr)
    if not text:
        return False
    last = text.rsplit(".", 1)[-1]
    if is_size_name(last):
        return not (sizes and (id(expr) in sizes.unheld or last in sizes.unheld_fields and text == "self." + last))
    return bool(sizes) and last in sizes and text == "self." + last


def int_equality(test: ast.expr) -> Optional[tuple]:
    """``(side, K, holds_when_equal)`` of ``side == K`` / ``side != K`` (or
    ``K == side``), ``K`` an int constant: the test a rank comparison is
    written as; None for any other test."""
    if type(test) is not ast.Compare or len(test.ops) != 1:
        return None
    op = type(test.ops[0])
    if op is not ast.Eq and op is not ast.NotEq:
        return None
    left, right = test.left, test.comparators[0]
    if type(left) is ast.Constant:
        left, right = right, left
    if type(right) is not ast.Constant or type(right.value) is not int:
        return None
    return left, right.value, op is ast.Eq


def single_rank_side(test: ast.expr, sizes=(), fold=None):
    """The branch label (True/False) of a test that holds only when a group
    has one rank: ``size == 1`` -> True, ``world_size > 1`` -> False
    (``sizes``: as for :func:`is_size_expr`); ``group is None`` -> True for
    a group named by a parallel dimension (:func:`is_named_group`: that
    group is not set up, so this process has no peers in it).  An
    ``and``/``or`` of such tests has the side its operands force: ``not (A
    and g is not None)`` holds only where some operand fails, and each one
    that can fail (``fold``, the function's test folder, settles the others:
    ``dist.is_initialized()`` holds in a world of several ranks) fails only
    where the group has one rank."""
    kind = type(test)
    if kind is ast.UnaryOp and isinstance(test.op, ast.Not):
        inner = single_rank_side(test.operand, sizes, fold)
        return None if inner is None else not inner
    if kind is ast.BoolOp:
        return _bool_op_side(test, sizes, fold)
    if kind is not ast.Compare or len(test.ops) != 1:
        return None
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if type(right) is ast.Constant and right.value is None and type(op) in (ast.Is, ast.IsNot):
        if not is_named_group(left):
            return None
        return type(op) is ast.Is
    if isinstance(left, ast.Constant) and is_size_expr(right, sizes):
        mirror = {ast.Lt: ast.Gt, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.GtE: ast.LtE, ast.Eq: ast.Eq, ast.NotEq: ast.NotEq}
        if type(op) not in mirror:
            return None
        left, op, right = right, mirror[type(op)](), left
    if not (is_size_expr(left, sizes) and isinstance(right, ast.Constant) and isinstance(right.value, int)):
        return None
    k = right.value
    single_when_true = {(ast.Eq, 1), (ast.LtE, 1), (ast.Lt, 2)}
    multi_when_true = {(ast.Gt, 1), (ast.GtE, 2), (ast.NotEq, 1)}
    if (type(op), k) in single_when_true:
        return True
    if (type(op), k) in multi_when_true:
        return False
    return None


def several_rank_side(test: ast.expr, sizes=()) -> Optional[bool]:
    """The branch label (True/False) of a test that holds only when a group
    has several ranks: ``world_size > 1`` -> True, ``size == 1`` -> False.
    Only a comparison of a size with a number (under ``not``) has one: the
    other side of :func:`single_rank_side`'s ``group is None`` or of an
    ``and``/``or`` may still be a group of one rank."""
    inner, flips = test, False
    while type(inner) is ast.UnaryOp and isinstance(inner.op, ast.Not):
        inner, flips = inner.operand, not flips
    if type(inner) is not ast.Compare or len(inner.ops) != 1 \
            or not any(type(side) is ast.Constant and type(side.value) is int
                       for side in (inner.left, inner.comparators[0])):
        return None
    single = single_rank_side(inner, sizes)
    return None if single is None else (single if flips else not single)


def _bool_op_side(test: ast.BoolOp, sizes, fold) -> Optional[bool]:
    """:func:`single_rank_side` of ``a and b`` / ``a or b``: the label on
    which the operand that decides it must be a single-rank side.  An
    operand ``fold`` settles (True in an ``and``, False in an ``or``) never
    decides; the others must each be such a test."""
    conjunction = type(test.op) is ast.And
    sides = []
    for value in test.values:
        settled = fold(value) if fold is not None else None
        if settled is conjunction:
            continue  # holds (an ``and``) or fails (an ``or``) on every path run
        sides.append(single_rank_side(value, sizes, fold))
    if not sides:
        return None
    if conjunction:
        # true: every operand holds, one that holds only for one rank is enough;
        # false: the operand that fails must be one failing only for one rank
        if True in sides:
            return True
        return False if all(side is False for side in sides) else None
    if False in sides:
        return False
    return True if all(side is True for side in sides) else None


def is_named_group(expr: ast.expr) -> bool:
    """``self.dp_tp_cpu_group``, ``tp_group``: a name or field whose last
    part is a process group named by a parallel dimension (not the world's,
    not an unnamed ``group``)."""
    text = dotted(expr)
    if not text:
        return False
    last = text.rsplit(".", 1)[-1]
    if "group" not in last.lower():
        return False
    named = group_from_text(last)
    return named is not None and named != "world"


def tests_membership(text: str, members: str) -> bool:
    """``rank in ranks`` (or ``not in``) where ``ranks`` made the collective's
    group with ``new_group(ranks)``: only the group's members get past it,
    which is exactly who must enter a collective over that group.  The list
    holds world ranks: ``local_rank in ranks`` is no membership."""
    operands = _in_test_operands(text)
    return operands is not None and operands[1].strip() == members and names_world_rank(operands[0])


def tests_own_group(text: str, groups) -> bool:
    """Whether a condition only asks if this rank belongs to one of
    ``groups`` (the texts naming the group a collective runs over):
    ``group is None``, ``not group``, ``_rank_not_in_group(group)``,
    ``group == GroupMember.NON_GROUP_MEMBER``.  A rank outside the group
    takes no part in its collectives, and every member answers alike."""
    asked = set()  # what the text alone says it asks membership of, whichever the groups
    for op in (" == ", " != ", " is ", " is not "):
        left, found, right = text.partition(op)
        if found and right.rsplit(".", 1)[-1].upper() == "NON_GROUP_MEMBER":
            asked.add(left)
    called = _call_text(text)
    if called is not None:
        name = called[0].removeprefix("not ").lower()
        if "group" in name and ("in_group" in name or "member" in name):
            asked.add(called[1])
    operands = _in_test_operands(text)
    if operands is not None:
        # ``dist.get_rank() in dist.get_process_group_ranks(group)``:
        # the group's own list of (world) ranks
        left, right = operands
        called = _call_text(right)
        if called is not None and called[0] == "get_process_group_ranks" and names_world_rank(left):
            asked.add(called[1])
    for group in groups:
        if group in asked or text in (group, f"not {group}", f"{group} is None", f"{group} is not None",
                                      f"{group} == None", f"{group} != None"):
            return True
    return False


def _call_text(text: str) -> Optional[tuple]:
    """``(the last part of the callee's name, the first argument)`` of the
    text of a call (``dist.in_group(group, rank)``: ``("in_group",
    "group")``), as written (a ``not`` before the callee stays), or None
    where the text calls nothing."""
    head, paren, rest = text.partition("(")
    if not paren:
        return None
    return head.strip().rsplit(".", 1)[-1], rest.rstrip(")").split(",")[0].strip()


def _in_test_operands(text: str) -> Optional[tuple]:
    """The operands of a test that a value is (or is not) in a list:
    ``rank in ranks``, ``rank not in ranks`` and ``not rank in ranks``
    (``not (rank in ranks)``) give the value's text, stripped, and the
    list's, as written; None for any other test."""
    for op in (" not in ", " in "):
        left, found, right = text.partition(op)
        if found:
            return left.strip().removeprefix("not "), right
    return None
