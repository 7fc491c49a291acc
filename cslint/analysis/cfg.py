"""Per-function control-flow graphs over stdlib ``ast`` (what decides whether
a node runs, its post-dominators and control dependence, is
:mod:`~cslint.analysis.controldependence`'s).

The graph is statement-level: one node per simple statement, one *test* node
per ``if``/``while`` test, ``for`` header, ``match`` case, ``assert`` and
``except`` clause.  A node with several successors is a *decision*; its
out-edges carry labels (``True``/``False`` for tests, ``'raise'`` for an
exception edge into a handler, ``'fail'`` for a failing ``assert``).

Modelling choices (why, not what):
* ``return`` goes to the one EXIT: a rank that leaves early skips whatever
  the others still call.  A failing ``assert`` or a branch that can only
  ``raise``, outside a ``try`` that handles it and with no caller in the
  module catching what it raises, ends the process (argument checks,
  invariants): a crash, not a divergence, so it adds no path.
* An exception edge goes from each statement of a ``try`` body that can raise
  into the handlers that *swallow* (do not end by re-raising); a handler that
  re-raises lets the process die, which is a crash, not a divergence (unless a
  ``try`` around it in the function or a caller in the module catches what it
  raises and goes on: the raising rank then leaves like ``return``,
  :meth:`_Builder._raise_caught`; so does a branch that can only raise
  where such a caller catches it; a ``raise`` that a ``with
  contextlib.suppress(E):`` of the function around it suppresses goes on
  after that block, :meth:`_Builder._suppressed_at`), and one
  that signals its parent process to end (:func:`~cslint.analysis.exits.ends_job`)
  has the launcher tear the whole job down.
* ``finally`` bodies are built once, on the normal path; callers correct
  their control dependences with :attr:`CFG.finally_owner`.
* A loop that never reaches EXIT (``while True`` without ``break``) gets a
  virtual exit edge from its header so post-dominance stays defined.
* Mode predicates (``if self.enable_attention_dp``) can be folded to a
  constant: the builder drops the infeasible edge, which is how one function
  gets one graph per mode assignment.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Callable, Optional

from .astwalk import holds_kind, irrefutable_case, iter_children, own_nodes
from .exits import (
    ENDS, EXIT_EXCEPTIONS, RAISES_ONLY, SWALLOWS, ParentNames, always_raises, catches_everything, class_name,
    ends_without_raising, handler_outcome, is_process_exit,
)

# node kinds
ENTRY, EXIT, STMT, TEST, LOOP, EXCEPT, CASE, ASSERT = (
    "entry", "exit", "stmt", "test", "loop", "except", "case", "assert",
)


@dataclass
class Node:
    id: int
    kind: str
    stmt: Optional[ast.AST] = None  # the statement (or the owning compound statement for tests)
    succs: list = field(default_factory=list)  # [(node_id, label)]
    preds: list = field(default_factory=list)
    exits: Optional[ast.AST] = None  # for STMT nodes that leave: the return/raise/break/continue


@dataclass
class CFG:
    nodes: list
    entry: int
    exit: int
    #: id(stmt) -> node ids built for it (a statement has one node unless a
    #: ``finally`` was duplicated; test nodes are listed under their compound stmt)
    stmt_nodes: dict = field(default_factory=dict)
    #: node id -> the ``try`` statement whose ``finally`` body holds it
    finally_owner: dict = field(default_factory=dict)
    #: node id -> the compound statement / clause it is the test of
    test_of: dict = field(default_factory=dict)
    #: built with ``escaping`` (exceptions leaving one rank are paths)
    escaping: bool = False
    #: node id -> the header of the innermost loop whose body built it
    loop_of: dict = field(default_factory=dict)
    #: id(if statement) -> (it, True where its body, False where its ``else`` only raises what ends the job):
    #: the arm the graph leaves out as a crash, not a path (:meth:`crashing_arm`)
    crashing_arms: dict = field(default_factory=dict)

    def node_of(self, stmt: ast.AST) -> Optional[int]:
        ids = self.stmt_nodes.get(id(stmt))
        return ids[0] if ids else None

    def crashing_arm(self, stmt: ast.If) -> Optional[bool]:
        """True where the body of ``stmt``, False where its ``else``, only raises what ends the job (nothing in
        the function or a caller of the module catches it, and an exception ends every rank's job): the graph
        keeps no path through that arm, so neither does a comparison of what the arms issue.  None for any other
        ``if``."""
        found = self.crashing_arms.get(id(stmt))
        return found[1] if found is not None and found[0] is stmt else None

    def leaves_uncaught(self, node_id: Optional[int]) -> bool:
        """Whether the ``raise`` or ``assert`` at ``node_id`` leaves the function with
        nothing catching it: a path of its own only in a graph built with ``escaping``."""
        if not self.escaping or node_id is None:
            return False
        return any(succ == self.exit for succ, _ in self.nodes[node_id].succs)


ModeFold = Callable[[ast.expr], Optional[bool]]

#: Label of the edge from a statement whose exception leaves the function (``unhandled-exceptions = "hang"``).
ESCAPE = "escape"

#: Statements with a body: what raises is their simple statements (and their tests), not they.
COMPOUND_STATEMENTS = (ast.If, ast.While, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.Try, ast.FunctionDef,
             ast.AsyncFunctionDef, ast.ClassDef, ast.Match)

#: A simple statement's failing work (escapes.py): LOCAL_WORK | FAILING_CALL bit flags.
FailsLocally = Callable[[ast.AST], int]
LOCAL_WORK = 1
FAILING_CALL = 2


def _may_raise(stmt: ast.AST, quiet=None) -> bool:
    """Statements that can throw at run time (calls, subscripts, awaits...);
    a statement that is only a call ``quiet`` names, or only binds a name to
    one (a call that reports its own errors and returns, a log call,
    ``logs.py``; one that cannot fail where it stands, ``unfailing.py``),
    throws only where evaluating its arguments does."""
    if isinstance(stmt, (ast.Raise, ast.Assert)):
        return True
    roots = [stmt]
    value = _plain_call(stmt) if quiet is not None else None
    if value is not None and quiet(value, stmt):
        roots = value.args + [kw.value for kw in value.keywords] + _receiver_operands(value)
    elif isinstance(stmt, (ast.If, ast.While)):
        roots = [stmt.test]
    elif isinstance(stmt, (ast.For, ast.AsyncFor)):
        roots = [stmt.iter]
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        roots = [item.context_expr for item in stmt.items]
    elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return False
    stack = list(roots)
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is ast.Call and quiet is not None and node is not value and quiet(node, stmt):
            # a call in a test or an operand that cannot throw itself: only its operands may
            stack.extend(node.args + [kw.value for kw in node.keywords] + _receiver_operands(node))
            continue
        if kind is ast.Call or kind is ast.Await or kind is ast.Subscript:
            return True
        stack.extend(iter_children(node))
    return False


def _plain_call(stmt: ast.AST):
    """The call a statement is made of alone (``f(x)``, ``name = f(x)``), else None."""
    kind = type(stmt)
    if kind is ast.Expr or (kind is ast.Assign and all(type(t) is ast.Name for t in stmt.targets)):
        return stmt.value if type(stmt.value) is ast.Call else None
    return None


def _receiver_operands(call: ast.Call) -> list:
    """What evaluating a method call's receiver may do itself: the
    operands of a receiver that is not a plain name or attribute chain."""
    head = call.func.value if type(call.func) is ast.Attribute else call.func
    while type(head) is ast.Attribute:
        head = head.value
    return [] if type(head) is ast.Name else [head]


#: what a ``finally`` may not hold for a raise through it to end the process: a call (it may issue a
#: collective first), or a jump that swallows the exception
_UNKNOWN_IN_A_FINALLY = frozenset({ast.Call, ast.Return, ast.Break, ast.Continue})


class _Builder:
    def __init__(self, func: ast.AST, fold: Optional[ModeFold], escaping: Optional[FailsLocally] = None,
                 exits: frozenset = EXIT_EXCEPTIONS, quiet=None, caught=None):
        self.nodes: list[Node] = []
        self.caught = caught  # the module's CallerCatches: a raising handler whose raise a caller catches
        self.fold = fold
        self.quiet = quiet  # calls that never throw themselves (_may_raise)
        self.exits = exits  # exceptions whose raise ends the process (exit_exceptions)
        self.func = func  # the function whose graph this is
        self.parent_names = ParentNames(func)  # its names bound to its parent process, found on first asking
        #: ``unhandled-exceptions = "hang"``: an exception that leaves the
        #: function on one rank is a path the other ranks wait on
        self.escaping = escaping
        self.branch_depth = 0  # how many ``if`` arms enclose the statement being built
        self.stmt_nodes: dict = {}
        self.finally_owner: dict = {}
        self.test_of: dict = {}
        self.loop_stack: list[tuple[int, int]] = []  # (continue target, break target)
        self.loop_of: dict = {}  # node id -> the header of the innermost loop around it
        self.entry = self._new(ENTRY)
        self.exit = self._new(EXIT)
        self.crashing_arms: dict = {}  # id(if) -> (it, whether the crashing arm is its body): CFG.crashing_arm
        #: each ``try`` around the statement being built, innermost last: (the entry nodes of its handlers that
        #: swallow, its except clauses, whether one of them catches everything: worked out once per ``try``, as
        #: every statement inside that may raise asks it), one stack, so no two can fall out of step
        self.handler_stack: list[tuple] = []
        self.handler_ends: list[bool] = []  # whether every handler of each try of handler_stack ends the process
        #: the ``with contextlib.suppress(E):`` blocks around the statement being built, innermost last:
        #: (the ``except E: pass`` each amounts to, the node after the block, len(handler_stack) at its entry)
        self.suppress_stack: list[tuple] = []
        self.finally_stack: list[ast.Try] = []

    def _new(self, kind: str, stmt: Optional[ast.AST] = None) -> int:
        node = Node(len(self.nodes), kind, stmt)
        self.nodes.append(node)
        if self.loop_stack:
            self.loop_of[node.id] = self.loop_stack[-1][0]
        if stmt is not None:
            self.stmt_nodes.setdefault(id(stmt), []).append(node.id)
            if self.finally_stack:
                self.finally_owner[node.id] = self.finally_stack[-1]
        return node.id

    def _edge(self, src: int, dst: int, label=None) -> None:
        self.nodes[src].succs.append((dst, label))
        self.nodes[dst].preds.append(src)

    def _ends_the_process(self) -> bool:
        """Whether what the statement being built raises ends the process: no ``try`` around it, or each
        ``try`` it passes (up to one that catches everything) has only handlers that end the process or
        the job with nothing any code may catch (:func:`~cslint.analysis.exits.ends_without_raising`:
        ``os._exit(1)``, ``os.abort()``, signalling the parent; ``sys.exit(1)`` raises ``SystemExit``, which a
        caller in another module may catch).  A handler that re-raises is no such end: a caller in another module, which the module's
        CallerCatches does not see, may catch what it raises and go on."""
        for ending, (_handlers, _clauses, catch_all) in zip(reversed(self.handler_ends), reversed(self.handler_stack)):
            if not ending:
                return False
            if catch_all:
                return True
        return True

    def _exception_targets(self) -> list[int]:
        targets: list[int] = []
        for handlers, _clauses, catch_all in reversed(self.handler_stack):
            targets.extend(handlers)
            if catch_all:
                break
        return targets

    def _add_raise_edges(self, node_id: int, stmt: ast.AST, suppressible: bool = True) -> None:
        suppressed = self._suppressing_after() if self.suppress_stack and suppressible else None
        if (self.handler_stack or suppressed is not None) and _may_raise(stmt, self.quiet):
            for target in self._exception_targets() if self.handler_stack else ():
                self._edge(node_id, target, "raise")
            if suppressed is not None and all(succ != suppressed for succ, _ in self.nodes[node_id].succs):
                # what it raises may be of a class the ``with contextlib.suppress(E):`` around it suppresses
                # (a call of unknown failures, a read of a missing file): the failing rank goes on past the
                # block, the others inside it (what decides it fails: ``Evaluator.raised_atoms``)
                self._edge(node_id, suppressed, "raise")
        elif self.escaping is not None and not self.handler_stack and not isinstance(stmt, COMPOUND_STATEMENTS):
            # Work that only some ranks do (inside an ``if`` arm) fails on those ranks only; where
            # the launcher does not tear the job down, the exception leaves this rank while the
            # others go on to the next collective.  (A call to a function that can fail on this
            # rank adds no edge: the sites after it carry its failure as their outermost
            # condition, guards.Guards.callee_escapes, so it moves no other decision.)
            if self.branch_depth and self.escaping(stmt) & LOCAL_WORK:
                self._edge(node_id, self.exit, ESCAPE)

    # -- sequences (built backwards: each returns the entry of what it built)
    def seq(self, stmts: list, succ: int) -> int:
        for stmt in reversed(stmts):
            succ = self.stmt(stmt, succ)
        return succ

    def stmt(self, s: ast.stmt, succ: int) -> int:
        t = type(s)  # (statement classes have no subclasses: one type test each, no isinstance call)
        if t is ast.If:
            return self._if(s, succ)
        if t is ast.While or t is ast.For or t is ast.AsyncFor:
            return self._loop(s, succ)
        if t is ast.Try or t.__name__ == "TryStar":
            return self._try(s, succ)
        if t is ast.With or t is ast.AsyncWith:
            suppressing = self._suppressing(s)
            if suppressing:
                self.suppress_stack.append((suppressing, succ, len(self.handler_stack)))
            body = self.seq(s.body, succ)
            if suppressing:
                self.suppress_stack.pop()
            node = self._new(STMT, s)
            self._edge(node, body)
            self._add_raise_edges(node, s)
            if self.escaping is not None and not self.handler_stack and self.branch_depth \
                    and any(self.escaping(item.context_expr) & LOCAL_WORK for item in s.items):
                # ``with open(path) as f:`` in an ``if`` arm: the header's own local work fails
                # on the ranks that do it, as a simple statement's does (its body is asked apart)
                self._edge(node, self.exit, ESCAPE)
            return node
        if t is ast.Match:
            return self._match(s, succ)
        if t is ast.Return or (t is ast.Expr and is_process_exit(s)):
            node = self._new(STMT, s)
            self.nodes[node].exits = s
            self._edge(node, self.exit)
            self._add_raise_edges(node, s)
            return node
        if t is ast.Raise:
            node = self._new(STMT, s)
            self.nodes[node].exits = s
            targets = self._exception_targets() if self.handler_stack else []
            for target in targets:
                self._edge(node, target, "raise")
            suppressed = self._suppressed_at(s) if self.suppress_stack else None
            if suppressed is not None:
                self._edge(node, suppressed)  # the rank goes on past the ``with`` that suppresses it
            elif not targets:
                self._edge(node, self.exit)
            return node
        if t is ast.Break or t is ast.Continue:
            node = self._new(STMT, s)
            self.nodes[node].exits = s
            if self.loop_stack:
                cont, brk = self.loop_stack[-1]
                self._edge(node, brk if t is ast.Break else cont)
            else:  # malformed; keep the graph connected
                self._edge(node, succ)
            return node
        if t is ast.Assert:
            node = self._new(ASSERT, s)
            self.test_of[node] = s
            self._edge(node, succ, True)
            # A failing assert outside a handled try ends the process: an
            # invariant, not a rank-local exit.  Inside a try whose handler
            # swallows it, the failure is a rank-local path; so is one that
            # leaves the function where the launcher leaves the others
            # running (``unhandled-exceptions = "hang"``).
            targets = self._exception_targets() if self.handler_stack else []
            for target in targets:
                self._edge(node, target, "fail")
            if not targets and self.escaping is not None:
                self._edge(node, self.exit, "fail")
            return node
        node = self._new(STMT, s)
        self._edge(node, succ)
        self._add_raise_edges(node, s)
        return node

    def _fold(self, test: ast.expr) -> Optional[bool]:
        if isinstance(test, ast.Constant):
            return bool(test.value)
        if self.fold is not None:
            return self.fold(test)
        return None

    def _if(self, s: ast.If, succ: int) -> int:
        self.branch_depth += 1
        body = self.seq(s.body, succ)
        orelse = self.seq(s.orelse, succ)
        self.branch_depth -= 1
        node = self._new(TEST, s)
        self.test_of[node] = s
        folded = self._fold(s.test)
        if folded is None and self.escaping is None and self._ends_the_process():
            # A branch that can only raise (argument checks, invariants) ends
            # the process unless something catches it here (a ``try`` whose
            # handlers all end the process, ``except BaseException: os._exit(1)``,
            # catches nothing that goes on: _ends_the_process): a crash, not a
            # rank-local skip, so it is not a path the other ranks wait on.
            # (Under ``unhandled-exceptions = "hang"`` the raising ranks leave
            # and the others wait: the raise is an exit like ``return``.)
            # Where a caller in the module catches what the arm raises and goes on, the raising
            # ranks leave the function like ``return`` while the others go on: a path of its own.
            exits = self.exits
            if always_raises(s.body, exits) and not always_raises(s.orelse, exits):
                folded = None if self._caller_catches(s.body) else False
            elif s.orelse and always_raises(s.orelse, exits) and not always_raises(s.body, exits):
                folded = None if self._caller_catches(s.orelse) else True
            if folded is not None:
                self.crashing_arms[id(s)] = (s, not folded)
        self._test_edges(node, s, body, orelse, folded)
        return node

    def _loop(self, s, succ: int) -> int:
        """A ``while`` or ``for`` loop: its header tests whether the body
        runs again (a ``while`` test may fold), else the ``else`` block."""
        header = self._new(LOOP, s)
        self.test_of[header] = s
        orelse = self.seq(s.orelse, succ)
        self.loop_stack.append((header, succ))
        body = self.seq(s.body, header)
        self.loop_stack.pop()
        self._test_edges(header, s, body, orelse, self._fold(s.test) if type(s) is ast.While else None)
        return header

    def _test_edges(self, node: int, s: ast.stmt, yes: int, no: int, folded: Optional[bool]) -> None:
        """The edges out of a test's node: to ``yes`` (True) unless the test
        folds to False, to ``no`` (False) unless it folds to True, then the
        edges of what evaluating the test may raise."""
        if folded is not False:
            self._edge(node, yes, True)
        if folded is not True:
            self._edge(node, no, False)
        # (a folded test keeps one of its arms: an exception edge past a suppressing ``with`` would make it a
        # decision read by its truth, the arm it dropped as a crash (or as never taken) read as the path)
        self._add_raise_edges(node, s, folded is None)

    def _raise_caught(self, handler: ast.ExceptHandler) -> bool:
        """Whether a handler that only raises (:data:`~cslint.analysis.exits.RAISES_ONLY`) has its
        raise caught where the rank goes on: by a swallowing handler of a ``try`` around it in this
        function (its raise gets their edges, as a ``raise`` in a ``try`` body does), or by a caller
        in the module (``caught``).  The rank then leaves the handler like ``return``, not the job.
        Under ``unhandled-exceptions = "hang"`` (``escaping``) every such handler is one: what it
        raises leaves this rank while the others wait, as an uncaught failure of local work does."""
        if self.escaping is not None:
            return True  # ``unhandled-exceptions = "hang"``: what it raises leaves this rank while the others wait
        if self.handler_stack and self._exception_targets():
            return True
        return self._caller_catches(handler.body)

    def _caller_catches(self, raising: list) -> bool:
        """Whether a caller in the module catches what the statements ``raising`` (a handler's
        body, an ``if`` arm that only raises) raise out of the function, and goes on; or a
        ``with contextlib.suppress(E):`` of the function around them does (:meth:`_suppressed_at`)."""
        if self.suppress_stack and any(type(node) is ast.Raise and self._suppressed_at(node) is not None
                                       for node in own_nodes(ast.Module(body=raising, type_ignores=[]))):
            return True
        return self.caught is not None and self.caught.raise_caught(self.func, raising)

    def _suppressing(self, s) -> list:
        """The handlers a ``with`` statement's ``contextlib.suppress(E)`` items amount to around its body."""
        caught = self.caught
        if caught is None or not caught.suppressors:
            return []
        return [handler for item in s.items for handler in (caught.suppressing(item.context_expr),) if handler]

    def _suppressing_after(self) -> Optional[int]:
        """The node after the innermost ``with contextlib.suppress(E):`` around the statement being built,
        None where a ``try`` inside that block catches everything first: an exception of unknown class
        that leaves the statement may be one it suppresses (a class it does not suppress ends the process,
        which adds no path)."""
        _handlers, after, depth = self.suppress_stack[-1]
        return None if any(catch_all for _handlers, _clauses, catch_all in self.handler_stack[depth:]) else after

    def _suppressed_at(self, s: ast.Raise) -> Optional[int]:
        """The node after the innermost ``with contextlib.suppress(E):`` around ``s`` that
        suppresses what it raises, None where none does or a ``try`` inside that block catches
        it first (everything, or its class): the suppressing rank leaves the block and goes on after it, where the
        others, which raised nothing, may still be inside it."""
        raised = None if s.exc is None else class_name(s.exc)  # a bare raise: any subclass of the caught
        for handlers, after, depth in reversed(self.suppress_stack):
            for _handlers, clauses, catch_all in self.handler_stack[depth:]:
                if catch_all or any(self.caught.catches(clause, raised) for clause in clauses):
                    return None  # a ``try`` inside the block catches it first
            if any(self.caught.catches(handler, raised) for handler in handlers):
                return after
        return None

    def _try(self, s, succ: int) -> int:
        after = succ
        if s.finalbody:
            self.finally_stack.append(s)
            after = self.seq(s.finalbody, succ)
            self.finally_stack.pop()
        swallowing = []
        catch_all = False
        # every handler ends the process or the job; a ``finally`` that calls anything may issue a collective
        # on the raising rank before it ends, against its peers' collective of the try body, and one that
        # returns, breaks or continues swallows the exception
        ending = not any(holds_kind(stmt, _UNKNOWN_IN_A_FINALLY) for stmt in s.finalbody)
        for handler in s.handlers:
            body = self.seq(handler.body, after)
            entry = self._new(EXCEPT, handler)
            self.test_of[entry] = handler
            self._edge(entry, body)
            if catches_everything(handler):
                catch_all = True
            outcome = handler_outcome(handler, self.parent_names)
            ending = ending and outcome == ENDS and ends_without_raising(handler, self.parent_names)
            if outcome == SWALLOWS or outcome == RAISES_ONLY and self._raise_caught(handler):
                swallowing.append(entry)
        orelse = self.seq(s.orelse, after)
        self.handler_stack.append((swallowing, s.handlers, catch_all))
        self.handler_ends.append(ending)
        body = self.seq(s.body, orelse)
        self.handler_stack.pop()
        self.handler_ends.pop()
        # a handler that does not swallow (it re-raises where no caller catches it, or ends the job or the
        # process) gets no edge in; one whose raise a caller catches leaves the function like ``return``
        return body

    def _match(self, s: ast.Match, succ: int) -> int:
        nxt = succ
        for case in reversed(s.cases):
            body = self.seq(case.body, succ)
            node = self._new(CASE, case)
            self.test_of[node] = case
            self._edge(node, body, True)
            if not irrefutable_case(case):
                self._edge(node, nxt, False)
            nxt = node
        subject = self._new(STMT, s)
        self._edge(subject, nxt)
        self._add_raise_edges(subject, s)
        return subject


def build_cfg(func: ast.AST, fold: Optional[ModeFold] = None, escaping: Optional[FailsLocally] = None,
              exits: frozenset = EXIT_EXCEPTIONS, quiet=None, caught=None) -> CFG:
    """The CFG of a function (or a module body: any node with ``body``);
    ``escaping`` (``unhandled-exceptions = "hang"``): which statements inside
    an ``if`` arm can fail on their own rank, whose exceptions leave the
    function as a path of their own; ``exits``: the exceptions whose raise
    ends the process like ``sys.exit`` (:func:`~cslint.analysis.exits.exit_exceptions`); ``quiet``:
    the calls that never throw themselves (a statement that is only such a
    call gets an exception edge only where its arguments may throw);
    ``caught``: the module's :class:`~cslint.analysis.exits.CallerCatches`
    (a handler that raises what a caller in the module catches gets its
    exception edges, its raise an exit of this rank like ``return``)."""
    builder = _Builder(func, fold, escaping, exits, quiet, caught)
    body = func.body if isinstance(func.body, list) else [ast.Return(value=func.body)]
    first = builder.seq(body, builder.exit)
    builder._edge(builder.entry, first)
    cfg = CFG(builder.nodes, builder.entry, builder.exit, builder.stmt_nodes,
              builder.finally_owner, builder.test_of)
    cfg.escaping = escaping is not None
    cfg.loop_of = builder.loop_of
    cfg.crashing_arms = builder.crashing_arms
    _connect_endless_loops(cfg)
    return cfg


def _reaches_exit(cfg: CFG) -> set:
    seen = {cfg.exit}
    stack = [cfg.exit]
    while stack:
        n = stack.pop()
        for p in cfg.nodes[n].preds:
            if p not in seen:
                seen.add(p)
                stack.append(p)
    return seen


def _connect_endless_loops(cfg: CFG) -> None:
    """Give every node a path to EXIT by adding virtual exit edges from loop
    headers (innermost first) that cannot reach it."""
    reaching = _reaches_exit(cfg)
    if len(reaching) == len(cfg.nodes):
        return
    for node in cfg.nodes:
        if node.id not in reaching and node.kind == LOOP:
            cfg.nodes[node.id].succs.append((cfg.exit, "never"))
            cfg.nodes[cfg.exit].preds.append(node.id)
            reaching = _reaches_exit(cfg)
    # Anything still stuck (unreachable code, odd shapes): link straight to EXIT.
    for node in cfg.nodes:
        if node.id not in reaching and node.id != cfg.exit:
            node.succs.append((cfg.exit, "never"))
            cfg.nodes[cfg.exit].preds.append(node.id)
    reaching = _reaches_exit(cfg)
