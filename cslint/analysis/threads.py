"""Code that runs on a background thread.

A thread runs at times each process's scheduler and timers decide, so what
it issues falls among the main thread's (or another thread's) traffic at a
different point on each rank.  Two shapes are followed: a method a library
calls from a thread of its own (:attr:`~cslint.presets.Preset.thread_callbacks`:
rich's auto-refresh thread calling a progress column's ``render``), whose
every site repeats as that thread's timer says; and a communicator made
inside a function the file starts as a ``threading.Thread`` target, a
collective on the parent communicator that another thread uses.  Other
collectives in a thread target are left alone: a thread that is the only
one communicating (TensorRT-LLM's executor loop runs on a worker thread), or
that uses a copy made for it, is safe, and which threads share a
communicator is not visible.
"""

from __future__ import annotations

import ast
from fnmatch import fnmatchcase
from typing import Optional

from ..model import Span
from ..presets import KIND_THREAD_TIMING
from .astwalk import walked
from .atoms import source
from .records import Cond
from .scope import canonical_text
from .syntax import dotted
from .vocabulary import ALL_MODES_ALL_DIMS

#: Collectives that make a communicator from another (MPI's ``Dup``/``Split``/
#: ``Create``, torch's ``new_group``): every rank of the parent issues them, on
#: the parent, in the order of its other traffic there.
COMMUNICATOR_MAKERS = frozenset({
    "Dup", "Split", "Split_type", "Create", "Create_group", "new_group", "new_subgroups",
    "new_subgroups_by_enumeration",
})


def thread_callback_cond(info) -> Optional[Cond]:
    """The outermost condition of every site of a method that a library
    calls from a thread of its own (:attr:`~cslint.presets.Preset.thread_callbacks`:
    a rich ``ProgressColumn``'s ``render``, which the auto-refresh thread
    calls on its timer): a loop whose trip count is that thread's timing,
    so each process issues what the method reaches a different number of
    times, at moments the main thread's collectives do not order."""
    callbacks = info.ctx.knowledge.thread_callbacks
    if not callbacks or not info.self_name or not info.class_key:
        return None
    name = info.qualname.rsplit(".", 1)[-1]
    for base in info.ctx.class_bases.get(info.class_key, ()):
        for pattern, methods in callbacks:
            if name in methods and fnmatchcase(base, pattern):
                func = info.func
                text = f"{base}.{name}"
                atoms = frozenset({source(KIND_THREAD_TIMING, text, info.ctx.path, func.lineno, ALL_MODES_ALL_DIMS)})
                return Cond("loop", atoms, f"{name}() calls from the library's own thread", func.lineno,
                            Span.of(func), statement="thread")
    return None


def thread_targets(ctx) -> dict:
    """{(class key or None, function name): line of the ``Thread(...)``}
    for the functions of the file started as a thread's target
    (``threading.Thread(target=self._loop)``, ``Thread(target=worker)``);
    computed once per file, when a site first asks."""
    found = ctx.__dict__.get("_thread_targets")
    if found is not None:
        return found
    found = {}
    if not any(target == "threading" or target.startswith("threading.") for target in ctx.imports.values()):
        ctx.__dict__["_thread_targets"] = found  # no ``Thread`` can be named without importing it
        return found
    for cls_key, func in _functions_with_class(ctx):
        for node in walked(func):
            if type(node) is not ast.Call or canonical_text(dotted(node.func), ctx.imports) != "threading.Thread":
                continue
            for keyword in node.keywords:
                if keyword.arg != "target":
                    continue
                target = keyword.value
                if type(target) is ast.Attribute and type(target.value) is ast.Name and target.value.id == "self" \
                        and cls_key is not None:
                    found.setdefault((cls_key, target.attr), node.lineno)
                elif type(target) is ast.Name and target.id in ctx.module_functions:
                    found.setdefault((None, target.id), node.lineno)
    ctx.__dict__["_thread_targets"] = found
    return found


def _functions_with_class(ctx):
    for stmt in ctx.tree.body:
        if type(stmt) in (ast.FunctionDef, ast.AsyncFunctionDef):
            yield None, stmt
        elif type(stmt) is ast.ClassDef:
            key = f"{ctx.module}:{stmt.name}"
            for member in stmt.body:
                if type(member) in (ast.FunctionDef, ast.AsyncFunctionDef):
                    yield key, member


def thread_target_cond(info) -> Optional[Cond]:
    """The outermost condition of a communicator made inside a function the
    file starts as a thread's target: a communicator is copied because
    another thread of the process uses the original, and the copy is a
    collective on that original, so where it falls among the other thread's
    traffic there is each process's thread scheduling (TensorRT-LLM's
    sample-state broadcast thread duplicated the pipeline communicator while
    the event loop sent on it, PR #13267; the fix duplicates it on the main
    thread before either thread starts)."""
    name = info.qualname.rsplit(".", 1)[-1]
    line = thread_targets(info.ctx).get((info.class_key if info.self_name else None, name))
    if line is None:
        return None
    atoms = frozenset({source(KIND_THREAD_TIMING, f"threading.Thread(target={name})", info.ctx.path, line,
                              ALL_MODES_ALL_DIMS)})
    return Cond("branch", atoms, f"{name}() runs on a thread started at line {line}", line, Span.of(info.func),
                statement="thread")


class BackgroundThreads:
    """The thread conditions of one function's sites (made once per function variant)."""

    __slots__ = ("_callback", "info")

    def __init__(self, info):
        self.info = info
        self._callback = None  # the library thread's condition, or False: asked on the first site

    def conds_of(self, site) -> tuple:
        """The outermost conditions a background thread adds to ``site``."""
        if self._callback is None:
            self._callback = thread_callback_cond(self.info) or False
        if self._callback:
            return (self._callback,)
        if site.collective and site.collective.name in COMMUNICATOR_MAKERS:
            started = thread_target_cond(self.info)
            if started is not None:
                return (started,)
        return ()
