"""Calls of another file's method that reaches a collective through a helper
of its own class, followed by the receiver's class.

Only methods that issue a collective themselves spread to other files by
name (``engine/gather.py``, ``wrapper_names``): spreading every method that
reaches one further down by name alone pulled in far too much.  A method that
hands its work to a method of its own class that issues a collective
(``RequestBroadcaster.broadcast`` calling ``self._broadcast_requests``)
spreads as a *typed* wrapper instead, ``"module:Class.method"`` among the
deep names (no short name has a ``:``): a function of another file calling
``receiver.method(...)`` is analysed in depth only where the receiver is an
instance of that class as the file itself shows it (a field every
constructor call assigned to it in the file, or a local, parameter or
annotation :class:`~cslint.analysis.receivers.ReceiverTypes` reads)."""

from __future__ import annotations

import ast
from typing import Optional

from .receivers import ReceiverTypes
from .scope import canonical_text
from .syntax import dotted


def typed_entries(deep_names) -> dict:
    """method name -> the classes (``module.Class``) whose method of that
    name is a typed wrapper, from the ``module:Class.method`` entries."""
    out: dict = {}
    for entry in deep_names:
        if ":" in entry:
            cls, _, method = entry.rpartition(".")
            out.setdefault(method, set()).add(cls.replace(":", "."))
    return out


def typed_entry(class_key: str, method: str) -> str:
    return f"{class_key}.{method}"


def module_entry(module: str, function: str) -> str:
    """The deep-name entry of a module-level function whose name is too
    short or too common to spread alone (``send``): ``pkg.p2p.send``, the
    dotted name a call of it is written as once the caller's imports are
    read (a ``.`` and no ``:``, unlike a plain or a typed entry)."""
    return f"{module}.{function}"


def module_entry_parts(entry: str) -> Optional[tuple]:
    """``(module, function)`` of a :func:`module_entry` entry (``pkg.p2p.send``:
    ``("pkg.p2p", "send")``); None for a plain or a typed entry."""
    if "." not in entry or ":" in entry:
        return None
    module, _, function = entry.rpartition(".")
    return module, function


def module_entries(deep_names) -> dict:
    """function name -> the dotted names (``pkg.p2p.send``) of the
    :func:`module_entry` entries among ``deep_names``."""
    out: dict = {}
    for entry in deep_names:
        parts = module_entry_parts(entry)
        if parts is not None:
            out.setdefault(parts[1], set()).add(entry)
    return out


def calls_module_wrapper(info, names: frozenset, qualified: dict) -> bool:
    """Whether function ``info`` (callee names ``names``) calls one of the
    ``qualified`` module functions through its module (``p2p.send(...)``)
    or by a name imported from it (``from .p2p import send``): a ``send``
    of any other receiver is another function."""
    wanted = names & qualified.keys()
    if not wanted:
        return False
    imports = info.ctx.imports
    for call in _own_calls(info):
        func = call.func
        name = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else None
        if name not in wanted:
            continue
        text = dotted(func)
        if text and canonical_text(text, imports) in qualified[name]:
            return True
    return False


def calls_typed_wrapper(info, names: frozenset, typed: dict) -> bool:
    """Whether function ``info`` (a scanned :class:`FunctionInfo`, callee
    names ``names``) calls a typed wrapper of ``typed`` on a receiver of its
    class."""
    wanted = names & typed.keys()
    if not wanted:
        return False
    receivers = None
    for call in _own_calls(info):
        func = call.func
        if type(func) is not ast.Attribute or func.attr not in wanted:
            continue
        if receivers is None:
            receivers = ReceiverTypes(info)
        if any(_names_class(named, typed[func.attr]) for named in _classes(info, receivers, func.value)):
            return True
    return False


def _names_class(named: str, classes: set) -> bool:
    """Whether ``named`` (``module.Class`` as a caller's imports spell it)
    is one of ``classes`` (``module.Class`` where each is defined): that
    very name, or the class's own name under a package of its module
    (``pkg.comm.Broadcaster`` for ``pkg.comm.broadcaster.Broadcaster``: the
    package's ``__init__.py`` re-exports it, ``from ..comm import
    Broadcaster``), as the whole-tree pass resolves it
    (:meth:`~cslint.analysis.resolution.Resolver.class_under_package`)."""
    if named in classes:
        return True
    package, _, name = named.rpartition(".")
    if not package:
        return False
    under = package + "."
    return any(defined.startswith(under) and defined.rpartition(".")[2] == name for defined in classes)


def _own_calls(info):
    """Every call the scan of ``info`` noted: those with arguments (by
    statement) and the argument-free ones, which the scan keeps apart
    (``group = comm.get_group()`` calls a wrapper as surely as
    ``comm.get_group(0)`` does)."""
    for calls in info.calls_by_statement.values():
        yield from calls
    yield from info.bare_calls


def _classes(info, receivers: ReceiverTypes, receiver: ast.AST) -> set:
    """The classes (``module.Class``) ``receiver`` may be an instance of."""
    attr = info.self_attr(receiver)
    if attr is not None:
        return {name for name in (_constructed(info.ctx, value) for field, value in info.ctx.field_writes
                                  if field == attr) if name}
    out = set()
    for term in receivers.terms(receiver):
        if term[0] == "named":
            out.add(term[1])
    return out


def _constructed(ctx, value) -> Optional[str]:
    if type(value) is not ast.Call:
        return None
    text = dotted(value.func)
    return canonical_text(text, ctx.imports) if text else None
