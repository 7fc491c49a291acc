"""A call every way out of a decision makes once.

A handler of requests often ends each of its early exits the way it ends
its last statement, handing the request on once whatever became of it::

    if error is not None:
        req.abort(error)
        self.enqueue(req)
        return
    if len(req.tokens) > self.limit:
        req.abort("too long")
        self.enqueue(req)
        return
    req.ready = True
    self.enqueue(req)

Which of these exits a rank takes decides nothing about whether it calls
``self.enqueue``, nor how often: every path from either side of each test
calls it exactly once before the function ends.  So the test is no
condition of the call (what the callee writes is written on every rank that
ran the function); what differs is what the call is handed, which the
dataflow follows on its own.  A ``try`` whose handler ends the same way is
read alike: the ranks that failed and the ranks that went on each call it
once.

Paths are counted off the syntax, with the counts 0, 1 and "more":
a statement calling the callee (``f(x)``, ``y = f(x)``, ``return f(x)``,
awaited or not) counts one; ``return`` and ``raise`` end a path with its
count; a loop, a ``match``, a ``break``/``continue``, a ``finally``, or a
call of the callee anywhere else (inside an expression, a loop, a test)
makes the answer unknown, which keeps the test.  The rest of the function
past the decision is read up through the blocks around it; a loop around
it (whose next pass is part of what follows) keeps the test too.
"""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import DEFINITIONS, LOOPS, holds_kind, walked
from .syntax import unparse

_LEAVES = frozenset({ast.Return, ast.Raise})  # (statements that leave the function)

_WITH = (ast.With, ast.AsyncWith)
_TRIES = tuple(kind for kind in (ast.Try, getattr(ast, "TryStar", None)) if kind is not None)
_CALLING = (ast.Expr, ast.Assign, ast.AnnAssign, ast.Return)
#: a count past one: a path that calls twice
_MORE = 2


class ExitCalls:
    """For one function: whether each side of a decision calls a callee
    exactly once on every path before the function ends.

    ``parents``: statement -> enclosing statement or handler (``id`` keyed,
    as :attr:`FunctionInfo.parents`); ``blocks``: statement -> the list it
    belongs to (:attr:`FunctionInfo.blocks`)."""

    def __init__(self, parents: dict, blocks: dict):
        self.parents = parents
        self.blocks = blocks
        self._answers: dict = {}  # (id(statement), kind, callee) -> (statement, answer)
        self._repeated = None  # the last names of callees two statements or more call as a statement
        #: (id(node), callee) -> (node, whether it holds a call of callee): the rest of the function is
        #: read again for each decision before it
        self._holds: dict = {}

    def test_decides_nothing(self, decision: ast.If, call: ast.Call) -> bool:
        """Whether both sides of ``decision`` call ``call``'s callee once on every path."""
        return self._known(decision, "if", call, self._test_uncached)

    def failure_decides_nothing(self, stmt: ast.stmt, call: ast.Call) -> bool:
        """Whether the ranks where ``stmt`` (a statement of a ``try`` body)
        raises into a handler and those where it completes each call
        ``call``'s callee once on every path."""
        return self._known(stmt, "raise", call, self._failure_uncached)

    def _known(self, stmt, kind: str, call: ast.Call, work) -> bool:
        func = call.func
        last = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else None
        if last is None or last not in self._repeated_names():
            return False  # no other statement calls it: no other way out makes the call
        callee = _text(func)
        key = (id(stmt), kind, callee)
        known = self._answers.get(key)
        if known is None or known[0] is not stmt:
            known = self._answers[key] = (stmt, work(stmt, callee))
        return known[1]

    def _repeated_names(self) -> frozenset:
        """The last names of the callees that two statements of the function
        or more call as a statement of their own (worked out once)."""
        if self._repeated is None:
            seen, repeated = set(), set()
            for block in {id(block): block for block in self.blocks.values()}.values():
                for stmt in block:
                    if type(stmt) in _CALLING:
                        value = stmt.value
                        if type(value) is ast.Await:
                            value = value.value
                        if type(value) is ast.Call:
                            func = value.func
                            name = func.attr if type(func) is ast.Attribute else \
                                func.id if type(func) is ast.Name else None
                            if name in seen:
                                repeated.add(name)
                            seen.add(name)
            self._repeated = frozenset(repeated)
        return self._repeated

    # -- the two kinds of decision ------------------------------------------------
    def _test_uncached(self, decision: ast.If, callee: str) -> bool:
        if _calls(decision.test, callee, self._holds):
            return False
        after = self._after(decision)
        if after is None:
            return False
        return all(_once(self._counts([arm, *after], callee)) for arm in (decision.body, decision.orelse))

    def _failure_uncached(self, stmt: ast.stmt, callee: str) -> bool:
        owner = self.parents.get(id(stmt))
        if not isinstance(owner, _TRIES) or owner.finalbody or self.blocks.get(id(stmt)) is not owner.body \
                or _calls(stmt, callee, self._holds):
            return False
        index = next((i for i, s in enumerate(owner.body) if s is stmt), None)
        after = self._after(owner)
        if index is None or after is None:
            return False
        before = _walk(owner.body[:index], {0}, set(), callee, self._holds)
        if before is None:
            return False
        completed = self._counts([owner.body[index + 1:], owner.orelse, *after], callee, set(before))
        return _once(completed) and all(
            _once(self._counts([handler.body, *after], callee, set(before))) for handler in owner.handlers)

    # -- paths ---------------------------------------------------------------------
    def _counts(self, blocks: list, callee: str, start=None) -> Optional[set]:
        """The counts the paths through ``blocks`` (one after the other, to
        the function's end) end with; None when unknown."""
        left: set = set()
        running = {0} if start is None else start
        for block in blocks:
            running = _walk(block, running, left, callee, self._holds)
            if running is None:
                return None
        return left | running

    def _after(self, stmt: ast.stmt) -> Optional[list]:
        """The blocks that run after ``stmt`` completes, to the end of the
        function; None where a loop is around it (its next pass follows) or
        the way out is not read here (a ``match``, a ``finally``)."""
        out = []
        child = stmt
        while True:
            block = self.blocks.get(id(child))
            if block is None:
                return None
            index = next((i for i, s in enumerate(block) if s is child), None)
            if index is None:
                return None
            out.append(block[index + 1:])
            parent = self.parents.get(id(child))
            if parent is None:
                return out
            if isinstance(parent, ast.ExceptHandler):
                parent = self.parents.get(id(parent))
                if not isinstance(parent, _TRIES) or parent.finalbody:
                    return None
            elif isinstance(parent, _TRIES):
                if parent.finalbody:
                    return None
                if block is parent.body:
                    out.append(parent.orelse)
            elif not isinstance(parent, (ast.If, *_WITH)):
                return None
            child = parent


def _once(counts: Optional[set]) -> bool:
    return counts == {1}


def _walk(block: list, running, left: set, callee: str, holds: dict) -> Optional[set]:
    """The counts of the paths still running past ``block``, entered with
    ``running``; the counts of those that leave go into ``left``.  None
    when a statement makes the count unknown.  ``holds``: :func:`_calls`' answers."""
    running = set(running)
    for stmt in block:
        if not running:
            break
        kind = type(stmt)
        if kind in _CALLING and _direct_call(stmt, callee, holds):
            running = {min(count + 1, _MORE) for count in running}
            if kind is ast.Return:
                left |= running
                running = set()
            continue
        if kind is ast.If:
            if _calls(stmt.test, callee, holds):
                return None
            body = _walk(stmt.body, running, left, callee, holds)
            orelse = _walk(stmt.orelse, running, left, callee, holds)
            if body is None or orelse is None:
                return None
            running = body | orelse
            continue
        if kind in _WITH:
            if any(_calls(item.context_expr, callee, holds) for item in stmt.items):
                return None
            running = _walk(stmt.body, running, left, callee, holds)
            if running is None:
                return None
            continue
        if kind in _TRIES:
            running = _walk_try(stmt, running, left, callee, holds)
            if running is None:
                return None
            continue
        if kind in DEFINITIONS:
            continue
        if kind in LOOPS or kind is ast.Match or kind is ast.Break or kind is ast.Continue:
            if kind in LOOPS and not _calls(stmt, callee, holds) and not _leaves(stmt):
                continue  # neither calls it nor leaves: the count goes on as it was
            return None
        if _calls(stmt, callee, holds):
            return None  # a call inside an expression: how often it runs is not read here
        if kind is ast.Return or kind is ast.Raise:
            left |= running
            running = set()
    return running


def _walk_try(stmt, running: set, left: set, callee: str, holds: dict) -> Optional[set]:
    """:func:`_walk` of a ``try`` with no ``finally``: a handler is entered
    with any count the body had reached before one of its statements."""
    if stmt.finalbody:
        return None
    reached = set(running)
    current = set(running)
    for part in stmt.body:
        current = _walk([part], current, left, callee, holds)
        if current is None:
            return None
        reached |= current
    out = _walk(stmt.orelse, current, left, callee, holds)
    if out is None:
        return None
    for handler in stmt.handlers:
        done = _walk(handler.body, reached, left, callee, holds)
        if done is None:
            return None
        out |= done
    return out


def _direct_call(stmt: ast.stmt, callee: str, holds: dict) -> bool:
    """Whether ``stmt`` is a call of ``callee`` as a statement of its own
    (its value, awaited or not), with no other call of it in its arguments."""
    value = stmt.value
    if type(value) is ast.Await:
        value = value.value
    if type(value) is not ast.Call or _text(value.func) != callee:
        return False
    targets = stmt.targets if type(stmt) is ast.Assign else [stmt.target] if type(stmt) is ast.AnnAssign else []
    return not any(_calls(part, callee, holds) for part in (*targets, *value.args, *(kw.value for kw in value.keywords)))


def _calls(node: ast.AST, callee: str, holds: dict) -> bool:
    """Whether ``node`` holds a call of ``callee`` anywhere (nested
    definitions included: a call there may run at any time); the answer
    kept in ``holds`` (with the node, so that its id stays its own), and
    so are the called expressions below ``node`` by their last names
    (:func:`_called`), walked once for every callee asked of it."""
    key = (id(node), callee)
    known = holds.get(key)
    if known is not None and known[0] is node:
        return known[1]
    found = False
    for func in _called(node, holds).get(callee.rsplit(".", 1)[-1], ()):
        if _text(func) == callee:
            found = True
            break
    holds[key] = (node, found)
    return found


def _called(node: ast.AST, holds: dict) -> dict:
    """last name -> the called expressions (``f``, ``obj.f``) of the calls below ``node``."""
    known = holds.get(id(node))
    if known is not None and known[0] is node:
        return known[1]
    out: dict = {}
    for sub in walked(node):
        if type(sub) is ast.Call:
            func = sub.func
            name = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else None
            if name is not None:
                out.setdefault(name, []).append(func)
    holds[id(node)] = (node, out)
    return out


def _leaves(node: ast.AST) -> bool:
    """Whether ``node`` holds a ``return`` or ``raise`` (leaving the function)."""
    return holds_kind(node, _LEAVES)


def _text(func: ast.AST) -> str:
    return unparse(func)
