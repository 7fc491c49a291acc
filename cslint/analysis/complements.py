"""One rank first, then the others: complementary tests binding a name to one call.

A leader often does some local work first (a download, a cache warm-up)
while the others wait, and then the others repeat it::

    if rank == 0:
        local = fetch(path)      # the leader fills the cache
    else:
        local = None
    dist.barrier()
    if rank != 0:
        local = fetch(path)      # the others read it warm
    config = read(local)

Past the second ``if`` every rank holds what ``fetch(path)`` returns: a
rank the second test lets by took the first test's arm, since nothing
between them changed what the tests read.  The dataflow, which does not
follow paths, sees ``local`` as None or the call, decided by the rank;
:func:`leader_first` finds the pair, so that the second ``if`` decides
nothing of the name it binds (``arms.ArmIndex.assignment_in_both_arms``)
and the way past it holds the call alone (``edges.Refinements``).

The pair: two ``if`` statements of one block whose tests are complements
over local names alone (``a == b`` / ``a != b``, ``is`` / ``is not``,
``in`` / ``not in``, ``X`` / ``not X``); the first's arm binds the name
once, a statement of the arm itself, to a call; the second, with no
``else``, binds it to the same call (the same text) in a statement of its
own arm; no statement between the two calls binds the name, a name the
tests or the call read, or leaves a loop (``break``, ``continue``); the
call reads neither the name nor a name bound by a walrus.
"""

from __future__ import annotations

import ast
from typing import NamedTuple, Optional

from .astwalk import DEFINITIONS, children_into, holds_kind, imported_names, plain_bindings, walk as fast_walk, walked
from .syntax import unparse

_WALRUS = frozenset({ast.NamedExpr})

_COMPLEMENTS = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
                ast.In: ast.NotIn, ast.NotIn: ast.In}
_LEAVING = (ast.Break, ast.Continue)


class LeaderFirst(NamedTuple):
    name: str
    first: ast.Assign  # ``name = call`` in the first ``if``'s arm
    second: ast.Assign  # the same in the second's


def _operands_only_names(test) -> Optional[frozenset]:
    """The names ``test`` reads, where it reads nothing but local names and
    constants (no attribute, call or subscript another call could change)."""
    names = set()
    for node in fast_walk(test):
        t = type(node)
        if t is ast.Name:
            names.add(node.id)
        elif t not in (ast.Compare, ast.UnaryOp, ast.Not, ast.Constant, ast.Load) and t not in _COMPLEMENTS:
            return None
    return frozenset(names)


def complementary(first, second) -> bool:
    """Whether ``second`` holds exactly where ``first`` does not."""
    if type(second) is ast.UnaryOp and type(second.op) is ast.Not:
        return unparse(second.operand) == unparse(first)
    if type(first) is ast.UnaryOp and type(first.op) is ast.Not:
        return unparse(first.operand) == unparse(second)
    if type(first) is not ast.Compare or type(second) is not ast.Compare or len(first.ops) != 1 \
            or len(second.ops) != 1 or _COMPLEMENTS.get(type(first.ops[0])) is not type(second.ops[0]):
        return False
    a, b = unparse(first.left), unparse(first.comparators[0])
    c, d = unparse(second.left), unparse(second.comparators[0])
    return (a, b) == (c, d) or (type(first.ops[0]) in (ast.Eq, ast.NotEq) and (a, b) == (d, c))


def _call_binding(statements: list, name: str) -> Optional[ast.Assign]:
    """The one statement of ``statements`` (an arm) binding ``name``, where
    it is ``name = call(...)`` itself and nothing else there binds it."""
    found = None
    for stmt in statements:
        bound = _stores(stmt)
        if name not in bound:
            continue
        if found is not None or type(stmt) is not ast.Assign or len(stmt.targets) != 1 \
                or type(stmt.targets[0]) is not ast.Name or type(stmt.value) is not ast.Call:
            return None
        found = stmt
    return found


def _stores(node) -> set:
    """The names a statement binds, anywhere inside it."""
    out = set()
    for sub in walked(node):
        t = type(sub)
        if t is ast.Name and type(sub.ctx) is not ast.Load:
            out.add(sub.id)
        elif t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            out.add(sub.name)
        elif t is ast.ExceptHandler and sub.name:
            out.add(sub.name)
        elif t is ast.Import or t is ast.ImportFrom:
            out.update(imported_names(sub))
        elif t is ast.Global or t is ast.Nonlocal:
            out.update(sub.names)
    return out


def _leaves_loop(statements: list) -> bool:
    for stmt in statements:
        if holds_kind(stmt, _LEAVING):
            return True
    return False


def leader_first(block: list, second: ast.If) -> Optional[LeaderFirst]:
    """The pair :mod:`this module <cslint.analysis.complements>` describes
    whose second ``if`` is ``second`` (a statement of ``block``); None where
    there is none."""
    if second.orelse or not any(type(stmt) is ast.Assign and type(stmt.value) is ast.Call for stmt in second.body):
        return None
    test_names = _operands_only_names(second.test)
    if test_names is None:
        return None
    index = next((i for i, stmt in enumerate(block) if stmt is second), None)
    if index is None:
        return None
    for at in range(index - 1, -1, -1):
        first = block[at]
        if type(first) is not ast.If or not complementary(first.test, second.test):
            continue
        between = block[at + 1:index]
        for stmt in second.body:
            if type(stmt) is not ast.Assign or len(stmt.targets) != 1 or type(stmt.targets[0]) is not ast.Name:
                continue
            name = stmt.targets[0].id
            late = _call_binding(second.body, name)
            early = _call_binding(first.body, name)
            if late is None or early is None or unparse(late.value) != unparse(early.value):
                continue
            reads = {sub.id for sub in walked(late.value) if type(sub) is ast.Name}
            if name in reads or holds_kind(late.value, _WALRUS):
                continue
            after_early = first.body[first.body.index(early) + 1:]
            before_late = second.body[:second.body.index(late)]
            span = after_early + between + before_late
            changed = set().union(*map(_stores, span)) if span else set()
            changed |= set().union(*map(_stores, first.body + first.orelse)) & test_names
            if changed & (reads | test_names | {name}) or _leaves_loop(between + before_late):
                continue
            return LeaderFirst(name, early, late)
        return None
    return None


# -- a function that hands back None wherever the world has several ranks ------------------------------------------

#: the comparisons of the world size that hold wherever it has several ranks
_SEVERAL = {ast.Gt: 1, ast.NotEq: 1, ast.GtE: 2}


def _several_ranks(test, named, job_tests: frozenset, world_sizes: frozenset) -> bool:
    """Whether ``test`` holds wherever the world has several ranks and fails
    wherever it has one: ``dist.get_world_size() > 1`` (``!= 1``, ``>= 2``;
    a call of the presets' ``world_sizes`` with no argument: the default
    group), with ``dist.is_initialized()`` beside it in an ``and`` (a call
    of their ``job_tests`` with no argument: no process group, no peers).
    ``named(call)``: the canonical name of what a call calls."""
    if type(test) is ast.BoolOp and type(test.op) is ast.And:
        sizes = [v for v in test.values if not (type(v) is ast.Call and not v.args and not v.keywords
                                                and named(v) in job_tests)]
        return len(sizes) == 1 and _several_ranks(sizes[0], named, job_tests, world_sizes)
    left = test.left if type(test) is ast.Compare else None
    if left is None or len(test.ops) != 1 or type(left) is not ast.Call or left.args or left.keywords \
            or named(left) not in world_sizes:
        return False
    bound = _SEVERAL.get(type(test.ops[0]))
    right = test.comparators[0]
    return bound is not None and type(right) is ast.Constant and right.value == bound


def _returns_none(stmt) -> bool:
    return type(stmt) is ast.Return and (stmt.value is None or (
        type(stmt.value) is ast.Constant and stmt.value.value is None))


def _own_statements(statements: list):
    """Every node of ``statements`` outside nested definitions and lambdas."""
    stack = list(statements)
    while stack:
        node = stack.pop()
        yield node
        if type(node) not in DEFINITIONS:
            children_into(node, stack)


def none_wherever_several_ranks(func, named, job_tests: frozenset, world_sizes: frozenset) -> bool:
    """Whether ``func`` hands back None wherever the world has several ranks:
    a statement of its own body ``if get_world_size() > 1: return None``
    (no ``else``), every ``return`` before it handing back None too and no
    ``yield``; what runs past that exit runs in a world of one rank, where
    nothing differs.  Then no ``return`` of it hands a caller anything that
    differs, whatever test chose it (``if not enabled: return None`` before
    the exit).  ``named(call)``: the canonical name of what a call calls;
    ``job_tests``, ``world_sizes``: the presets' (``Knowledge``) names of
    the calls that say whether the process is part of a job and how many
    ranks the job has."""
    body = getattr(func, "body", None)
    if not isinstance(body, list) or isinstance(func, ast.Lambda):
        return False
    for index, stmt in enumerate(body):
        if type(stmt) is ast.If and not stmt.orelse and len(stmt.body) == 1 and _returns_none(stmt.body[0]) \
                and _several_ranks(stmt.test, named, job_tests, world_sizes):
            return all(_returns_none(node) if type(node) is ast.Return else type(node) not in (ast.Yield, ast.YieldFrom)
                       for node in _own_statements(body[:index]))
    return False


def names_none_wherever_several_ranks(func, none_wherever_several) -> frozenset:
    """The local names of ``func`` every binding of which is ``name = None``
    or ``name = call(...)`` of a function that hands back None wherever the
    world has several ranks (``none_wherever_several(call)``:
    :func:`none_wherever_several_ranks` of what it calls), at least one
    such call: in a world of several ranks the name is None on every rank,
    whichever binding a rank ran last (``if count is None: store =
    self.store_for(key)`` under a rank-decided test), and in a world of one
    nothing differs, so no test deciding which binding ran reaches it.
    Only where the name is no parameter and nothing else binds it (a loop,
    ``with ... as``, ``except ... as``, an import, a walrus, ``+=``, a
    definition, ``global`` or ``nonlocal``)."""
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return frozenset()
    bound = plain_bindings(func, lambda value: type(value) is ast.Call
                           or type(value) is ast.Constant and value.value is None)
    out = []
    for name, statements in bound.items():
        calls = [stmt.value for stmt in statements if type(stmt.value) is ast.Call]
        if calls and all(none_wherever_several(call) for call in calls):
            out.append(name)
    return frozenset(out)
