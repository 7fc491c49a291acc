"""Calls that emit a log record through the standard library's ``logging``.

A logger's emitting methods (``debug``, ``info``, ``warning``, ``error``,
``exception``, ``critical``, ``log``) do not raise: an error while a handler
formats or writes the record goes to ``Handler.handleError``, which reports
it and returns.  What can fail is the evaluation of the call's arguments
before the call (an f-string whose value raises), which follows the
operands like any builtin.  So a ``try`` body's log call sends no rank into
a handler of its own (``Evaluator.raised_atoms``: its operands decide), and
it runs no code of the tree (``raises.library_call``).

A logger is told by what it is, never by its name: the ``logging`` module
itself (``logging.warning(...)``), a call of ``logging.getLogger(...)``, or a
module-level name that the module binds only to such a call
(``logger = logging.getLogger(__name__)``) and that the function does not
bind itself.  A parameter or a field called ``logger`` may be any object.
"""

from __future__ import annotations

import ast
from functools import partial

from .bindings import assigned_names
from .scope import canonical_text
from .syntax import dotted
from .unfailing import cannot_raise

#: the emitting methods of ``logging.Logger`` (and the module's functions of the same names)
LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log"})

_GET_LOGGER = "logging.getLogger"


def _makes_logger(node, imports: dict) -> bool:
    return type(node) is ast.Call and canonical_text(dotted(node.func), imports) == _GET_LOGGER


def module_loggers(ctx) -> frozenset:
    """The module-level names the file binds only to ``logging.getLogger(...)``
    (every module-level binding of the name is such an assignment); once per file."""
    found = ctx.__dict__.get("_module_loggers")
    if found is not None:
        return found
    made, other = set(), set()
    imports = ctx.imports
    for node in ctx.tree.body:
        if type(node) is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name \
                and _makes_logger(node.value, imports):
            made.add(node.targets[0].id)
            continue
        if type(node) is ast.AnnAssign and type(node.target) is ast.Name and node.value is not None \
                and _makes_logger(node.value, imports):
            made.add(node.target.id)
            continue
        other.update(assigned_names(node))
    found = ctx.__dict__["_module_loggers"] = frozenset(made - other - set(imports))
    return found


def logging_call(func: ast.expr, info) -> bool:
    """Whether a call of ``func`` emits a log record through the standard
    library: an emitting method of the ``logging`` module, of a
    ``logging.getLogger(...)`` call, or of a module-level logger of the file
    (:func:`module_loggers`) the function does not bind itself."""
    if type(func) is not ast.Attribute or func.attr not in LOG_METHODS:
        return False
    value = func.value
    ctx = info.ctx
    if type(value) is ast.Call:
        return _makes_logger(value, ctx.imports)
    if type(value) is not ast.Name or value.id in info.local_names:
        return False
    name = value.id
    if name in ctx.imports:
        return ctx.imports[name] == "logging" and name not in ctx.module_globals
    return name in module_loggers(ctx)


def _uses_logging(ctx) -> bool:
    found = ctx.__dict__.get("_uses_logging")
    if found is None:
        found = ctx.__dict__["_uses_logging"] = any(
            target == "logging" or target.startswith("logging.") for target in ctx.imports.values())
    return found


def quiet_calls(info):
    """The CFG's ``quiet`` test for a function (``cfg.build_cfg``): whether a
    call made by a statement never throws itself (:func:`logging_call`, or
    ``unfailing.cannot_raise``: a builtin container's method, a condition's
    notify inside its own ``with``)."""
    if not _uses_logging(info.ctx):
        return partial(_cannot_raise, info)
    return partial(_is_quiet_call, info)


def _cannot_raise(info, call: ast.Call, stmt) -> bool:
    return cannot_raise(call, stmt, info)


def _is_quiet_call(info, call: ast.Call, stmt) -> bool:
    return logging_call(call.func, info) or cannot_raise(call, stmt, info)
