"""What a failure in a ``try`` body skips: the bindings it leaves undone.

A rank whose statement raises inside a ``try`` body jumps to the handler;
the names the rest of the body would have bound keep what they held
before.  Where the handler falls through to the code after the ``try``,
that code reads, on the ranks that failed, the earlier binding and, on
the others, the body's::

    segment = None
    try:
        segment = open_segment(path)     # may fail on this rank only
    except OSError:
        pass
    if segment is None:                  # differs by that failure
        return

The control dependence the dataflow reads leaves a body's exception
decisions out of everything outside the handlers (a rank that raised is
not in the body any more, so what the body reads is alike).  This module
puts them back where the two kinds of ranks meet again: entering a
handler that falls through, each name the body binds and the code outside
the body reads takes the failures of the body's statements that run at or
before a binding of it (the binding statement's own included); a name
the ``else`` clause binds, which runs only where nothing in the body
raised, takes the failures of every statement of the body.  Reads inside
the body, and in the ``else`` clause, are left alone.

A handler that keeps what it caught in a name (``failure = error``) hands
the failure on in that name, which then holds its divergence (the
handler's own implicit flow): the code after the ``try`` tells the ranks
apart by it, and where it agrees on it first (gathers the failures and
raises alike: :mod:`cslint.analysis.recorded`) what the failure skipped is
alike past that agreement.  The bindings of such a ``try`` are read as the
body made them; the record speaks for the failure.
"""

from __future__ import annotations

import ast

from . import cfg as cfgmod
from .arms import names_bound
from .astwalk import walk as fast_walk
from .atoms import EMPTY, whole
from .recorded import keeps_caught

#: statements whose binding a failure of their own value leaves undone
_BINDINGS = (ast.Assign, ast.AnnAssign, ast.AugAssign)


class SkippedBindings:
    """The bindings a failure in a ``try`` body leaves undone, for one
    function's :class:`~cslint.analysis.dataflow.Dataflow`."""

    def __init__(self):
        self._at_handler: dict = {}  # EXCEPT node -> ((name, binding nodes), ...)

    def at_handler(self, dataflow, n: int) -> tuple:
        """``(name, binding nodes)`` for each name that the ``try`` body of
        the handler entered at node ``n`` binds and the code outside that
        body reads; empty where the handler leaves the function (a ``break``
        or ``continue`` goes on to code that may read them)."""
        found = self._at_handler.get(n)
        if found is None:
            found = self._at_handler[n] = _at_handler(dataflow, n)
        return found

    def bind(self, dataflow, n: int, flow) -> None:
        """Entering the handler at node ``n``: each name of :meth:`at_handler`
        also holds the failures that may have skipped its binding."""
        guarded = dataflow.info.parents.get(id(dataflow.graph.nodes[n].stmt))
        for name, bindings in self.at_handler(dataflow, n):
            atoms = EMPTY
            for m in bindings:
                atoms = atoms | _skipping(dataflow, m, guarded)
            if atoms:
                flow.write(name, flow.current().get(name, EMPTY) | whole(atoms))


def _skipping(dataflow, m: int, guarded) -> frozenset:
    """The failures of the body of ``guarded`` that run at or before node
    ``m`` (its own included, where the body holds it; every statement of the
    body, where its ``else`` clause does): each sends a rank to a handler
    before ``m`` binds."""
    in_body = _owning_try(dataflow.graph.nodes[m].stmt, dataflow.info.parents) is guarded
    atoms = dataflow.cond_atoms(m) if in_body and dataflow.is_exception_decision(m) else EMPTY
    for d, label in dataflow.closures.get(m, ()):
        if label != "raise" and dataflow.is_exception_decision(d) \
                and _owning_try(dataflow.graph.nodes[d].stmt, dataflow.info.parents) is guarded:
            atoms = atoms | dataflow.cond_atoms(d)
    return atoms


def _at_handler(dataflow, n: int) -> tuple:
    """:meth:`SkippedBindings.at_handler`, worked out."""
    node = dataflow.graph.nodes[n]
    handler = node.stmt
    if node.kind != cfgmod.EXCEPT or not isinstance(handler, ast.ExceptHandler) or cfgmod.leaves_function(handler.body) \
            or keeps_caught(handler):
        return ()
    guarded = dataflow.info.parents.get(id(handler))
    if not isinstance(guarded, ast.Try):
        return ()
    read_outside = names_read_outside(dataflow.info.body, guarded.body + guarded.orelse)
    bindings: dict = {}
    parents = dataflow.info.parents
    for m in dataflow.live:
        stmt = dataflow.graph.nodes[m].stmt
        if isinstance(stmt, _BINDINGS) and m not in dataflow.handler_nodes \
                and (_owning_try(stmt, parents) is guarded or _in_else_of(stmt, guarded, parents)):
            for name in sorted(names_bound(stmt) & read_outside):
                bindings.setdefault(name, []).append(m)
    return tuple((name, tuple(sorted(found))) for name, found in sorted(bindings.items()))


def names_read_outside(body: list, inside: list) -> frozenset:
    """The plain names the statements of ``body`` read outside the nodes ``inside``."""
    within = {id(sub) for part in inside for sub in fast_walk(part)}
    return frozenset(sub.id for stmt in body for sub in fast_walk(stmt)
                     if type(sub) is ast.Name and type(sub.ctx) is ast.Load and id(sub) not in within)


def _in_else_of(stmt, guarded: ast.Try, parents) -> bool:
    """Whether ``stmt`` lies in the ``else`` clause of ``guarded`` (at any
    depth), which runs only where no statement of its body raised."""
    child, parent = stmt, parents.get(id(stmt))
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        if parent is guarded:
            return any(child is s for s in guarded.orelse)
        child, parent = parent, parents.get(id(parent))
    return False


def _owning_try(stmt, parents):
    """The innermost ``try`` whose body (not its handlers, ``else`` or
    ``finally``) holds ``stmt``, or None."""
    child, parent = stmt, parents.get(id(stmt))
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        if isinstance(parent, ast.Try):
            if any(child is s for s in parent.body):
                return parent
            return None  # a handler, ``else`` or ``finally`` of this try: no failure of its body skips it
        child, parent = parent, parents.get(id(parent))
    return None
