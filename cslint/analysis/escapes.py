"""Work that fails on one rank and leaves it (``unhandled-exceptions = "hang"``).

Where the launcher does not tear a job down when one rank raises (MPI-launched
executors), an error that leaves one rank while the others go on is a hang:
they wait for it in their next collective.  Local work -- I/O on this rank's
disk or network, ``next()`` on its own iterator, the calls a preset names in
``local_failures`` (a KV-cache allocation a full rank refuses) -- fails on
the ranks that do it, so the ranks differ where they do it under tests that
differ.  Inside the function that does it, that is an ``if`` arm (the CFG's
``escape`` edges, :func:`~cslint.analysis.cfg.build_cfg`).  A caller sees it
through a call to a function of the file that does such work, or raises an
error itself (a ``raise``, an ``assert``), outside any ``try``, directly or
through another such call: the callee's own tests decide
(:attr:`~cslint.analysis.records.Variant.escapes`, read in the whole-tree pass
through an :class:`~cslint.analysis.atoms.EscapedBy` atom).
"""

from __future__ import annotations

import ast

from .astwalk import DEFINITIONS, children_into, walk as fast_walk, walked
from .atoms import EMPTY, escaped_by
from .cfg import FAILING_CALL, LOCAL_WORK
from .exits import raises_exit
from .syntax import dotted
from .vocabulary import LOCAL_IO_CALLS

#: Calls whose failure is this rank's own: its disk, its network peers, the end of its own iterator.
LOCAL_FAILURES = LOCAL_IO_CALLS | {"next"}

# Kinds of a statement's failing work (bit flags, :func:`escaping_kind`): LOCAL_WORK, it does local
# work itself (it differs where its ``if`` arms hold); FAILING_CALL, it calls a function of the file
# that can fail on this rank (the callee's tests decide).



def _call_name(node: ast.Call):
    func = node.func
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)


def _unguarded_calls(func: ast.AST):
    """The calls a function body makes outside any ``try`` and outside nested definitions."""
    stack = list(func.body)
    while stack:
        node = stack.pop()
        if type(node) in DEFINITIONS:
            continue
        if isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            stack.extend(node.orelse)  # only what its handlers do not guard
            stack.extend(node.finalbody)
            continue
        if isinstance(node, ast.Call):
            yield node
        children_into(node, stack)


def _raises_unguarded(func: ast.AST, exits: frozenset) -> bool:
    """Whether a function body raises an error (a ``raise`` of anything but
    an exit exception, an ``assert``) outside any ``try`` and nested definition."""
    stack = list(func.body)
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is ast.Raise:
            if node.exc is not None and not raises_exit(node, exits):
                return True
            continue
        if kind is ast.Assert:
            return True
        if type(node) in DEFINITIONS or not isinstance(node, ast.stmt):
            continue
        if isinstance(node, ast.Try) or type(node).__name__ == "TryStar":
            stack.extend(node.orelse)
            stack.extend(node.finalbody)
            continue
        stack.extend(getattr(node, "body", None) or ())
        stack.extend(getattr(node, "orelse", None) or ())
        for case in getattr(node, "cases", None) or ():
            stack.extend(case.body)
    return False


def _plain_or_module_call(call: ast.Call, modules: frozenset) -> bool:
    """``open(path)``, ``next(it)``, ``os.remove(path)``: a builtin or a
    function of an imported module (``modules``), not a method of the same
    name on some object (``self.active_requests.remove(r)`` is a list's,
    which fails alike everywhere or nowhere)."""
    func = call.func
    if isinstance(func, ast.Name):
        return True
    while isinstance(func, ast.Attribute):
        func = func.value
    return isinstance(func, ast.Name) and func.id in modules


def _imported_modules(ctx) -> frozenset:
    """The names a file imports and does not bind again at module level."""
    return frozenset(name for name in ctx.imports if name not in ctx.module_globals)


def _fails_here(call: ast.Call, presets: frozenset, modules: frozenset) -> bool:
    """Whether ``call`` is local work that can fail on this rank alone: a call
    a preset names, or a builtin or module function of :data:`LOCAL_FAILURES`."""
    name = _call_name(call)
    return name in presets or (name in LOCAL_FAILURES and _plain_or_module_call(call, modules))


def failing_functions(ctx) -> frozenset:
    """Names of the file's functions and methods that do local work outside
    any ``try`` (a builtin or module function of :data:`LOCAL_FAILURES`, or a
    call a preset names in ``local_failures``) or raise an error there
    (:func:`_raises_unguarded`), or call (by a plain or ``self.`` name) one
    that does; a class of the file whose own ``__init__`` does, by its name
    (a call of the class runs it); computed once per file."""
    found = ctx.__dict__.get("_failing_functions")
    if found is not None:
        return found
    presets = ctx.knowledge.local_failures
    modules = _imported_modules(ctx)
    calls: dict = {}  # function name -> names it calls outside a try
    failing = set()
    for node in walked(ctx.tree):
        kind = type(node)
        if kind is ast.ClassDef:
            # a call of the class runs its own ``__init__``: the class fails where that does
            for init in node.body:
                if type(init) in (ast.FunctionDef, ast.AsyncFunctionDef) and init.name == "__init__":
                    _note_failing(node.name, init, ctx, presets, modules, calls, failing)
        elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            _note_failing(node.name, node, ctx, presets, modules, calls, failing)
    changed = True
    while changed:
        changed = False
        for name, called in calls.items():
            if name not in failing and called & failing:
                failing.add(name)
                changed = True
    found = ctx.__dict__["_failing_functions"] = frozenset(failing)
    return found


def _note_failing(name: str, node: ast.AST, ctx, presets, modules, calls: dict, failing: set) -> None:
    """Note under ``name`` whether the function ``node`` fails on this rank itself, and the names it calls
    (by a plain or ``self.`` name) outside any ``try``."""
    called = set()
    if _raises_unguarded(node, ctx.exit_exceptions):
        failing.add(name)
    for call in _unguarded_calls(node):
        if _fails_here(call, presets, modules):
            failing.add(name)
            continue
        if isinstance(call.func, ast.Name) or (isinstance(call.func, ast.Attribute)
                                                 and isinstance(call.func.value, ast.Name)
                                                 and call.func.value.id == "self"):
            called.add(_call_name(call))
    calls.setdefault(name, set()).update(called)


def failing_calls(ctx, stmt: ast.AST) -> list:
    """The calls of a simple statement to functions of the file that can fail on this rank."""
    return _calls_to(failing_functions(ctx), stmt)


def escaped_calls(info, stmt: ast.AST) -> frozenset:
    """Whether the calls of ``stmt`` to functions of the file that can fail
    on this rank do fail there (an :func:`~cslint.analysis.atoms.escaped_by`
    atom per call ``info``, the calling function's facts, resolves): the
    callee's own tests decide."""
    out = EMPTY
    for call in failing_calls(info.ctx, stmt):
        ref = info.resolve_ref(call.func)
        if ref is not None:
            out = out | {escaped_by(ref, info.ctx.path, call.lineno, dotted(call.func) or "call")}
    return out


def statement_escapes(info, stmt: ast.AST, implicit: frozenset) -> frozenset:
    """What decides whether a simple statement fails on this rank with an
    error nothing in its function catches: the tests above it (``implicit``)
    where it does local work, and the callee's own (:func:`escaped_calls`)
    for a call to a function of the file that can fail.  The summary walk
    and the in-depth analysis both ask it."""
    kind = escaping_kind(info.ctx)(stmt)
    if not kind:
        return EMPTY
    return implicit | escaped_calls(info, stmt) if kind & FAILING_CALL else implicit


def _calls_to(failing: frozenset, stmt: ast.AST) -> list:
    if not failing:
        return []
    out = []
    for node in walked(stmt):
        if isinstance(node, ast.Call) and _call_name(node) in failing and (
                isinstance(node.func, ast.Name) or (isinstance(node.func, ast.Attribute)
                                                    and isinstance(node.func.value, ast.Name))):
            out.append(node)
    return out


class _FailingWork:
    """The CFG's ``escaping`` test for a file: a simple statement's
    :data:`LOCAL_WORK` and :data:`FAILING_CALL` flags.  Local work is told
    as :func:`failing_functions` tells it (:func:`_fails_here`).  A small
    object holding only names, not the module context: kept on the context,
    a closure over it would be a reference cycle outliving the file."""

    __slots__ = ("presets", "modules", "failing")

    def __init__(self, presets: frozenset, modules: frozenset, failing: frozenset):
        self.presets = presets
        self.modules = modules
        self.failing = failing

    def __call__(self, stmt: ast.AST) -> int:
        flags = 0
        for node in fast_walk(stmt):
            if isinstance(node, ast.Call) and _fails_here(node, self.presets, self.modules):
                flags |= LOCAL_WORK
                break
        if _calls_to(self.failing, stmt):
            flags |= FAILING_CALL
        return flags


def escaping_kind(ctx) -> _FailingWork:
    """The :class:`_FailingWork` test of a file (made once per file)."""
    found = ctx.__dict__.get("_escaping_kind")
    if found is None:
        found = ctx.__dict__["_escaping_kind"] = _FailingWork(
            frozenset(ctx.knowledge.local_failures), _imported_modules(ctx), failing_functions(ctx))
    return found
