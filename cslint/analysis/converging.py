"""A statement whose failure ends the function as its success does.

An exception parts the ranks only where the path it takes differs from the
one the peers take.  In a ``try`` body, a statement followed in its own
block by nothing but quiet statements (log calls, calls that cannot raise)
and a ``return`` of a constant, inside a ``try`` one of whose handlers
catches everything and every handler of which is quiet and returns that
same constant, ends the function with that value whether it raises or not::

    try:
        workspace = make_workspace(group=group)
        if not workspace.multicast:
            workspace.destroy()          # raising here ...
            return None                  # ... or not: None
    except Exception:
        logger.warning("no workspace")
        return None

so a failure there is no rank-local choice (``Evaluator.raised_atoms``).
What the statement did before it failed (half a teardown) is its own
business: where it communicates, a rank failing alone inside it hangs its
peers there, which the call's own reach reports.
"""

from __future__ import annotations

import ast

from .exits import catches_everything
from .logs import logging_call
from .syntax import dotted
from .unfailing import cannot_raise

#: builtins that make a string or a truth value of anything
_UNFAILING_BUILTINS = frozenset({"str", "repr", "bool", "isinstance", "type"})
#: methods of a string (the message of a caught exception) that cannot raise
_STRING_METHODS = frozenset({"lower", "upper", "strip", "startswith", "endswith"})


def ends_alike_if_raised(info, stmt) -> bool:
    """Whether ``stmt`` ends its function with the same constant whether it
    raises (into a handler of the innermost ``try`` around it) or not."""
    if hasattr(stmt, "body"):
        return False  # a compound statement's test that does not raise runs its arms, which may return otherwise
    try_stmt = info.enclosing_try(stmt)
    if try_stmt is None or not try_stmt.handlers or not any(info.inside(stmt, part) for part in try_stmt.body):
        return False
    if not any(catches_everything(handler) for handler in try_stmt.handlers):
        return False
    tail = _tail_after(info, stmt)
    value = _returned_constant(tail, info)
    if value is _NONE_FOUND:
        return False
    for handler in try_stmt.handlers:
        returned = _returned_constant(handler.body, info)
        if returned is _NONE_FOUND or type(returned) is not type(value) or returned != value:
            return False
    return True


_NONE_FOUND = object()


def _tail_after(info, stmt) -> list:
    """The statements after ``stmt`` in the block that holds it."""
    parent = info.parents.get(id(stmt))
    if parent is None:
        return []
    for field in ("body", "orelse", "finalbody"):
        block = getattr(parent, field, None)
        if isinstance(block, list):
            for index, child in enumerate(block):
                if child is stmt:
                    return block[index + 1:]
    return []


def _returned_constant(block: list, info):
    """The constant a block returns after quiet statements only, else ``_NONE_FOUND``."""
    if not block:
        return _NONE_FOUND
    last = block[-1]
    if type(last) is not ast.Return:
        return _NONE_FOUND
    if last.value is not None and type(last.value) is not ast.Constant:
        return _NONE_FOUND
    if not all(_quiet(part, info) for part in block[:-1]):
        return _NONE_FOUND
    return None if last.value is None else last.value.value


def _quiet(stmt, info) -> bool:
    """A statement that cannot raise and changes nothing the function returns:
    ``pass``, a log call or a call that cannot raise (its arguments
    constants, names, f-strings, strings of them), or an ``if`` on such
    operands with quiet arms."""
    kind = type(stmt)
    if kind is ast.Pass:
        return True
    if kind is ast.Expr and type(stmt.value) is ast.Call:
        call = stmt.value
        if not (logging_call(call.func, info) or cannot_raise(call, stmt, info)
                or _known_alike(call, info)):
            return False
        return all(_plain(arg) for arg in list(call.args) + [keyword.value for keyword in call.keywords])
    if kind is ast.If:
        return _plain(stmt.test) and all(_quiet(part, info) for part in stmt.body + stmt.orelse)
    return False


def _known_alike(call: ast.Call, info) -> bool:
    """A call the presets know to answer alike on every rank (and fail, if it does, by its operands)."""
    raw = dotted(call.func)
    return bool(raw) and "()" not in raw and info.ctx.knowledge.is_uniform(raw)


def _plain(node) -> bool:
    """An operand whose evaluation cannot raise: constants, names, f-strings,
    comparisons and tests of them, ``str()`` of them and a string's methods."""
    for sub in ast.walk(node):
        if type(sub) is ast.Call:
            func = sub.func
            if type(func) is ast.Name and func.id in _UNFAILING_BUILTINS:
                continue
            if type(func) is ast.Attribute and func.attr in _STRING_METHODS:
                continue
            return False
        if type(sub) in (ast.Subscript, ast.BinOp, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr, ast.Lambda):
            return False
    return True
