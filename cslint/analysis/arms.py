"""Arms of an ``if``/``else`` that do the same thing.

A test that differs between ranks decides nothing about a call both of its
arms make under the same conditions: every rank makes it, on one side or the
other::

    if is_leader:
        with autotune():
            runner.dummy_run(**kwargs)
    else:
        runner.dummy_run(**kwargs)

So whatever that call writes is written on every rank, not "only on some
ranks".  Likewise an assignment both arms make from the same call with the
same positional arguments (``done = warmup(runner, n, context=tuning)`` and
``done = warmup(runner, n)``) gives every rank what that call returns: what
still differs between the ranks is what its arguments and its callee carry,
which the dataflow follows on its own.  Keyword arguments may differ between
the arms (they choose options: tuning, display, logging); a different
positional argument, target or callee makes the arms different.

"Under the same conditions" is read off the syntax: the chain of compound
statements from the arm down to the statement must name the same tests and
loops in both arms (``with`` blocks are transparent: they run their body
once).  ``if a: f() elif b: f()`` has no such pair (the second call is under
``b``); neither has a call inside a nested function.

A third shape makes every rank take an arm: ``if rank in ranks:`` inside a
loop over the parts of a partition (:func:`selects_own_part`), where each
rank finds its own part.  What it writes there is written on every rank,
only not the same: the contents differ, the structure (there or not, None
or not) does not.
"""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import walk as fast_walk
from .syntax import target_names, unparse

_WITH = (ast.With, ast.AsyncWith)
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


class ArmIndex:
    """Answers, for one function, whether a statement's call or assignment
    is matched in the other arm of an enclosing two-armed ``if``.

    ``parents``: statement -> enclosing statement (``id`` keyed, as
    :attr:`FunctionInfo.parents`); ``blocks``: statement -> the list it
    belongs to (:attr:`FunctionInfo.blocks`)."""

    def __init__(self, parents: dict, blocks: dict):
        self.parents = parents
        self.blocks = blocks
        self._arm_statements: dict = {}  # (id(if), arm) -> [(path, statement)]
        # id(statement) -> (statement, its _assignment_key): every decision
        # above a statement asks about the statements of its other arm again
        self._keys: dict = {}
        self._callees: dict = {}  # id(call) -> (the call, the text of its callee)
        self._steps: dict = {}  # (id(compound statement), id(block)) -> (the statement, its _step)

    # -- queries -------------------------------------------------------------------
    def call_in_both_arms(self, decision: ast.If, stmt: ast.AST, call: ast.Call) -> bool:
        """Whether ``call`` (made by ``stmt``, inside one arm of ``decision``)
        is made by the other arm too, with the same callee, under the same
        conditions."""
        placed = self._place(decision, stmt)
        if placed is None:
            return False
        arm, path = placed
        callee = self._callee(call)
        return any(other_path == path and any(self._callee(c) == callee for c in _calls_of(other))
                   for other_path, other in self._statements(decision, _other(arm)))

    def _callee(self, call: ast.Call) -> str:
        """The text of ``call``'s callee, kept per call (asked again for
        every call of the other arm)."""
        known = self._callees.get(id(call))
        if known is not None and known[0] is call:
            return known[1]
        text = unparse(call.func)
        self._callees[id(call)] = (call, text)
        return text

    def assignment_in_both_arms(self, decision: ast.If, stmt: ast.AST) -> bool:
        """Whether ``stmt`` assigns one target from a call (``x = f(a, b)``)
        and the other arm of ``decision`` makes the same assignment (same
        target, callee and positional arguments) under the same conditions."""
        key = self._assignment_key(stmt)
        if key is None:
            return False
        placed = self._place(decision, stmt)
        if placed is None:
            return False
        arm, path = placed
        return any(other_path == path and self._assignment_key(other) == key
                   for other_path, other in self._statements(decision, _other(arm)))

    def _assignment_key(self, stmt: ast.AST) -> Optional[tuple]:
        known = self._keys.get(id(stmt))
        if known is not None and known[0] is stmt:
            return known[1]
        key = _assignment_key(stmt)
        self._keys[id(stmt)] = (stmt, key)
        return key

    # -- where a statement sits ------------------------------------------------------
    def _place(self, decision: ast.If, stmt: ast.AST) -> Optional[tuple]:
        """``(arm, path)``: which arm of ``decision`` holds ``stmt`` and the
        conditions between them; None when ``stmt`` is not in either arm
        (its test, a nested function) or ``decision`` has no ``else``."""
        if not decision.orelse:
            return None
        path = []
        child = stmt
        parent = self.parents.get(id(child))
        while parent is not None and parent is not decision:
            if isinstance(parent, _DEFINITIONS):
                return None
            step = self._step(parent, self.blocks.get(id(child)))
            if step is not None:
                path.append(step)
            child, parent = parent, self.parents.get(id(parent))
        if parent is None:
            return None
        block = self.blocks.get(id(child))
        if block is decision.body:
            arm = "body"
        elif block is decision.orelse:
            arm = "orelse"
        else:
            return None
        path.reverse()
        return arm, tuple(path)

    def _step(self, parent: ast.AST, block) -> Optional[tuple]:
        """:func:`_step`, kept per block: the path of every statement under
        a compound statement passes through it again."""
        key = (id(parent), id(block))
        known = self._steps.get(key)
        if known is not None and known[0] is parent:
            return known[1]
        step = _step(parent, block)
        self._steps[key] = (parent, step)
        return step

    def _statements(self, decision: ast.If, arm: str) -> list:
        key = (id(decision), arm)
        found = self._arm_statements.get(key)
        if found is None:
            found = []
            _collect(getattr(decision, arm), (), found)
            self._arm_statements[key] = found
        return found


def _other(arm: str) -> str:
    return "orelse" if arm == "body" else "body"


def _step(parent: ast.AST, block) -> Optional[tuple]:
    """What entering ``block`` of the compound statement ``parent`` asks:
    its test, its loop, its handler; None for a ``with`` (it runs its body
    once, whatever it manages)."""
    if isinstance(parent, _WITH):
        return None
    part = next((name for name in _BLOCKS if getattr(parent, name, None) is block), "")
    if isinstance(parent, (ast.If, ast.While)):
        return type(parent).__name__, part, unparse(parent.test)
    if isinstance(parent, (ast.For, ast.AsyncFor)):
        return "For", part, unparse(parent.target), unparse(parent.iter)
    if isinstance(parent, ast.ExceptHandler):
        return "except", part, unparse(parent.type) if parent.type is not None else ""
    if type(parent).__name__ == "match_case":
        return "case", part, unparse(parent.pattern), unparse(parent.guard) if parent.guard is not None else ""
    return type(parent).__name__, part


def _collect(block: list, path: tuple, out: list) -> None:
    """Every statement of ``block`` with the steps that lead to it from the
    arm, nested blocks included, nested definitions left out."""
    for stmt in block:
        if isinstance(stmt, _DEFINITIONS):
            continue
        out.append((path, stmt))
        for name in _BLOCKS:
            inner = getattr(stmt, name, None)
            if not inner or not isinstance(inner, list):
                continue
            step = _step(stmt, inner)
            if name == "handlers" or name == "cases":
                for handler in inner:
                    own = _step(handler, handler.body)
                    _collect(handler.body, path + tuple(s for s in (step, own) if s is not None), out)
            else:
                _collect(inner, path + ((step,) if step is not None else ()), out)


def _calls_of(stmt: ast.AST) -> list:
    """The calls a statement makes itself: all of a simple statement's, the
    header's of a compound one (its test, iterable, managed contexts)."""
    if isinstance(stmt, (ast.If, ast.While)):
        parts = [stmt.test]
    elif isinstance(stmt, (ast.For, ast.AsyncFor)):
        parts = [stmt.iter]
    elif isinstance(stmt, _WITH):
        parts = [item.context_expr for item in stmt.items]
    elif isinstance(stmt, ast.Match):
        parts = [stmt.subject]
    elif any(getattr(stmt, name, None) for name in _BLOCKS) or isinstance(stmt, _DEFINITIONS):
        return []
    else:
        parts = [stmt]
    out = []
    for part in parts:
        out.extend(node for node in fast_walk(part) if isinstance(node, ast.Call))
    return out


def _assignment_key(stmt: ast.AST) -> Optional[tuple]:
    """``(target, callee, positional arguments)`` of ``x = f(a, b)`` (one
    target, a call as the value); None for any other statement."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target, value = stmt.targets[0], stmt.value
    elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        target, value = stmt.target, stmt.value
    else:
        return None
    if not isinstance(value, ast.Call) or any(isinstance(a, ast.Starred) for a in value.args):
        return None
    return unparse(target), unparse(value.func), tuple(unparse(a) for a in value.args)


def tests_membership(stmt: ast.AST) -> bool:
    """Whether ``stmt`` is ``if <x> in <name>:`` or ``if <x> not in <name>:
    continue``: the shape :func:`selects_own_part` looks for, told from the
    statement alone (before a walker builds the parent links it needs)."""
    if not isinstance(stmt, ast.If) or not isinstance(stmt.test, ast.Compare) or len(stmt.test.ops) != 1 \
            or not isinstance(stmt.test.comparators[0], ast.Name):
        return False
    operator = stmt.test.ops[0]
    skips_others = isinstance(operator, ast.NotIn) and len(stmt.body) == 1 and isinstance(stmt.body[0], ast.Continue)
    return isinstance(operator, ast.In) or skips_others


def selects_own_part(stmt: ast.AST, parents: dict) -> bool:
    """Whether ``stmt`` is ``if <x> in <part>:`` (or ``if <x> not in <part>:
    continue``) inside a loop over the parts of a partition, ``<part>`` being
    the loop's own variable or assigned in its body (``for ranks in groups:
    g = new_group(ranks); if rank in ranks: self.group = g``).  The parts are taken to cover the ranks, as the
    groups of one parallel dimension do."""
    if not tests_membership(stmt):
        return False
    part = stmt.test.comparators[0].id
    loop = parents.get(id(stmt))
    while loop is not None and not isinstance(loop, (ast.For, ast.AsyncFor)):
        if isinstance(loop, _DEFINITIONS):
            return False
        loop = parents.get(id(loop))
    if loop is None:
        return False
    return part in target_names(loop.target) or any(
        isinstance(inner, ast.Assign) and any(part in target_names(t) for t in inner.targets)
        for inner in fast_walk(loop) if inner is not stmt)
