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

A wait that found nothing yet skips nothing that differs where a thread
the file starts runs it in a loop (:func:`idle_wait`)::

    while True:                          # the target of threading.Thread
        tickets = []
        try:
            tickets = [self.commands.get(timeout=60)]
        except Empty:                    # nothing put yet: go round again
            pass

Whether the wait timed out is when another thread of the process put the
item, which the analysis does not model (nor a field another thread writes
between two statements): the k-th item the loop handles is the k-th one put,
on every rank, however many idle passes each thread made before it.  What
the handler itself does (its bindings, its field writes, its sites) still
reads the failure, and so does a site whose way it decides (a ``continue``
in the handler).  Not seen: an idle pass that issues a collective over a
group whose ranks' threads time out each at its own pace.
"""

from __future__ import annotations

import ast

from . import cfg as cfgmod
from .exits import leaves_function
from .arms import names_bound
from .astwalk import walked
from .atoms import EMPTY, whole
from .raises import exception_names
from .recorded import keeps_caught
from .threads import thread_targets
from .vocabulary import WAIT_TIMEOUTS

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
        also holds the failures that may have skipped its binding (none
        where the handler catches a thread's idle wait, :func:`idle_wait`)."""
        handler = dataflow.graph.nodes[n].stmt
        guarded = dataflow.info.parents.get(id(handler))
        if idle_wait(dataflow.info, handler, guarded):
            return
        for name, bindings in self.at_handler(dataflow, n):
            atoms = _skipping_all(dataflow, bindings, guarded)
            if atoms:
                flow.write(name, flow.current().get(name, EMPTY) | whole(atoms))

    def handlers_binding_only(self, dataflow, name: str, others) -> tuple:
        """``(handler node, binding nodes)`` of each handler that falls
        through where its ``try`` body (or ``else`` clause) makes every
        binding ``others`` of ``name``: a failure skipping them leaves the
        name as it was before the ``try``, which no binding but those not
        in ``others`` (``name = None``) can have made."""
        wanted = frozenset(others)
        found = []
        live = dataflow.live
        for n in [node.id for node in dataflow.graph.nodes if node.kind == cfgmod.EXCEPT and node.id in live]:
            for bound_name, bindings in self.at_handler(dataflow, n):
                if bound_name == name and wanted <= frozenset(bindings):
                    found.append((n, bindings))
        return tuple(found)

    def skipping_failures(self, dataflow, n: int, bindings) -> frozenset:
        """What entering the handler at node ``n`` adds to a name bound at
        ``bindings`` in its ``try`` (:meth:`bind`): the failures that may
        skip them, whole."""
        handler = dataflow.graph.nodes[n].stmt
        guarded = dataflow.info.parents.get(id(handler))
        if idle_wait(dataflow.info, handler, guarded):
            return EMPTY
        atoms = _skipping_all(dataflow, bindings, guarded)
        return whole(atoms) if atoms else EMPTY


def _skipping_all(dataflow, bindings, guarded) -> frozenset:
    atoms = EMPTY
    for m in bindings:
        atoms = atoms | _skipping(dataflow, m, guarded)
    return atoms


def idle_wait(info, handler, guarded) -> bool:
    """Whether ``handler`` catches only that a wait found nothing yet
    (:data:`~cslint.analysis.vocabulary.WAIT_TIMEOUTS`: ``queue.Empty``,
    ``TimeoutError``) from a ``try`` whose body is that one binding, inside
    a ``while`` loop of a function the file starts as a thread's target
    (:func:`~cslint.analysis.threads.thread_targets`): the failure is the
    timing of the thread that feeds the wait, not a divergence (see the
    module)."""
    if not isinstance(guarded, ast.Try) or len(guarded.body) != 1 or not isinstance(guarded.body[0], _BINDINGS):
        return False
    names = exception_names(handler.type)
    if not names or not all(name in WAIT_TIMEOUTS for name in names):
        return False
    if not _inside_while(guarded, info.parents):
        return False
    name = info.qualname.rsplit(".", 1)[-1]
    return (info.class_key if info.self_name else None, name) in thread_targets(info.ctx)


def _inside_while(stmt, parents) -> bool:
    """Whether ``stmt`` lies in the body of a ``while`` loop of its function."""
    child, parent = stmt, parents.get(id(stmt))
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        if isinstance(parent, ast.While) and any(child is s for s in parent.body):
            return True
        child, parent = parent, parents.get(id(parent))
    return False


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
    if node.kind != cfgmod.EXCEPT or not isinstance(handler, ast.ExceptHandler) or leaves_function(handler.body) \
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
    within = {id(sub) for part in inside for sub in walked(part)}
    return frozenset(sub.id for stmt in body for sub in walked(stmt)
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
