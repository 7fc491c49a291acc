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
or not) does not.  So does such a test outside a loop whose arm hands on the
tested rank list itself (:mod:`cslint.analysis.membership`).
"""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import DEFINITIONS, LOOPS, holds_kind, plain_bindings, walk as fast_walk, walked
from .bindings import target_names
from .cfg import COMPOUND_STATEMENTS, LOOP, TEST
from .complements import leader_first
from .membership import selects_listed_group, selects_own_pass, tests_own_index
from .syntax import unparse
from .vocabulary import MUTATORS

_LEAVES = frozenset({ast.Return, ast.Raise})  # (statements that leave the function)

_WITH = (ast.With, ast.AsyncWith)
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
        # id(if) -> (the if, its assigned_past_return): asked again for every
        # assignment of its body
        self._past_return: dict = {}
        self._leader_first: dict = {}  # id(if) -> (the if, its complements.leader_first)

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
        if not decision.orelse:
            return self._assigned_past_return(decision, stmt, key) or self.leader_first(decision) is not None \
                and self.leader_first(decision).second is stmt
        placed = self._place(decision, stmt)
        if placed is None:
            return False
        arm, path = placed
        if any(other_path == path and self._assignment_key(other) == key
               for other_path, other in self._statements(decision, _other(arm))):
            return True
        return self._assigns_on_every_path(decision.body, key) and self._assigns_on_every_path(decision.orelse, key)

    def other_arm_statements(self, decision: ast.If, stmt: ast.AST) -> Optional[tuple]:
        """``(in_body, statements)``: the statements of the other arm of
        ``decision`` than ``stmt``'s, under the same conditions as ``stmt``,
        and whether that arm is the ``if``'s body; None where ``stmt`` is in
        neither arm."""
        placed = self._place(decision, stmt)
        if placed is None:
            return None
        arm, path = placed
        other = _other(arm)
        return other == "body", [s for p, s in self._statements(decision, other) if p == path]

    def rebuilt_alike(self, func: ast.AST, stmt: ast.AST) -> bool:
        """Whether ``stmt`` binds a local name from a call every binding of
        that name in ``func`` repeats (:func:`rebuilt_names`): whichever of
        them a rank ran last, it holds what that one call returns."""
        if type(stmt) is not ast.Assign or len(stmt.targets) != 1 or type(stmt.targets[0]) is not ast.Name:
            return False
        rebuilt = self.__dict__.get("_rebuilt")
        if rebuilt is None:
            rebuilt = self.__dict__["_rebuilt"] = rebuilt_names(func, self.parents, self._top_level_calls())
        key = rebuilt.get(stmt.targets[0].id)
        return key is not None and self._assignment_key(stmt) == key

    def _top_level_calls(self) -> frozenset:
        """Names a statement of the function's own body binds from a call
        (``sock = context.socket(kind)``) that another statement binds from
        the same call: the only candidates of :func:`rebuilt_names`, found
        from the statements alone (most functions have none, and are not
        walked)."""
        made: dict = {}
        for block in {id(block): block for block in self.blocks.values()}.values():
            for stmt in block:
                if type(stmt) is ast.Assign and len(stmt.targets) == 1 and type(stmt.targets[0]) is ast.Name \
                        and type(stmt.value) is ast.Call:
                    made.setdefault(stmt.targets[0].id, []).append(stmt)
        names = set()
        for name, statements in made.items():
            if len(statements) > 1:
                top = [stmt for stmt in statements if self.parents.get(id(stmt)) is None]
                if top and sum(self._assignment_key(stmt) == self._assignment_key(top[0]) for stmt in statements) > 1:
                    names.add(name)
        return frozenset(names)

    def _assigned_past_return(self, decision: ast.If, stmt: ast.AST, key: tuple) -> bool:
        """Whether ``decision``, a statement of the function's own body with
        no ``else`` whose body ends in ``return``, and the rest of the
        function both make ``stmt``'s assignment (:func:`assigned_past_return`)."""
        if self.parents.get(id(decision)) is not None:
            return False
        block = self.blocks.get(id(decision))
        if block is None:
            return False
        known = self._past_return.get(id(decision))
        if known is None or known[0] is not decision:
            known = self._past_return[id(decision)] = (decision, assigned_past_return(block, decision))
        pair = known[1].get(key)
        return pair is not None and any(made is stmt for made in pair)

    def leader_first(self, decision: ast.If):
        """:func:`~cslint.analysis.complements.leader_first` of ``decision`` (once)."""
        known = self._leader_first.get(id(decision))
        if known is None or known[0] is not decision:
            block = self.blocks.get(id(decision))
            known = self._leader_first[id(decision)] = (decision, block and leader_first(block, decision))
        return known[1]

    def _assigns_on_every_path(self, block: list, key: tuple) -> bool:
        """Whether every path through ``block`` makes the assignment ``key``:
        a statement of the block itself, or an ``if`` of it with an
        ``else`` both arms of which do (an ``if``/``elif``/``else`` chain
        that assigns in every arm), or a ``with`` whose body does."""
        for stmt in block:
            if isinstance(stmt, ast.If):
                if stmt.orelse and self._assigns_on_every_path(stmt.body, key) \
                        and self._assigns_on_every_path(stmt.orelse, key):
                    return True
            elif isinstance(stmt, _WITH):
                if self._assigns_on_every_path(stmt.body, key):
                    return True
            elif self._assignment_key(stmt) == key:
                return True
        return False

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
            if type(parent) in DEFINITIONS:
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


class ArmReads:
    """Whether every read of a name is in one arm of an ``if`` (or in the
    other, which what this arm binds never reaches outside a loop): then every
    rank reading what that arm binds took the arm, and its test does not
    make the name differ between them (``if dist.get_rank() in
    get_process_group_ranks(g): grad = ...; if grad is None: return``).
    Asked for one function's CFG by the dataflow; an ``if`` inside a loop
    never answers yes (a later pass may read what an earlier one bound on
    some ranks only), nor does a name a nested function, class or lambda
    mentions."""

    __slots__ = ("graph", "closures", "live", "info", "names", "_in_loop", "_readers")

    def __init__(self, graph, closures: dict, live, info, names: dict):
        self.graph, self.closures, self.live, self.info = graph, closures, live, info
        self.names = names  # node -> the names its own expressions mention (shared with the dataflow)
        self._in_loop: dict = {}  # if node -> whether a loop of the function holds it
        self._readers = None  # name -> the nodes that mention it (_index)

    def read_alike(self, d: int, label, names: frozenset) -> bool:
        """Whether every rank reading one of ``names`` took decision ``d``'s
        ``label`` edge alike: an ``if`` (:meth:`read_only_in_arm`) or a loop
        (:meth:`read_only_in_body`)."""
        node = self.graph.nodes[d]
        if node.kind == LOOP:
            return label is True and self.read_only_in_body(d, names)
        return (label is True or label is False) and node.kind == TEST \
            and isinstance(node.stmt, ast.If) and self.read_only_in_arm(d, label, names)

    def read_only_in_body(self, d: int, names: frozenset) -> bool:
        """Whether the loop at node ``d`` is outside any other loop and
        every node that mentions one of ``names`` is in its body: a rank
        reading there in its k-th pass has taken the loop's test k times,
        like every other rank reading there in its k-th pass, so how often
        the loop runs does not make what the body binds differ between
        them (``while n < count: item = queue.get(); handle(item)``); only
        where ranks that left after different counts meet again (after the
        loop, its ``else``, the next pass of a loop around it) does it."""
        if not names or self._loop_around(d):
            return False
        graph = self.graph
        # the loop's body, or the other arm of an ``if`` holding the loop (no loop holds that ``if``)
        apart = {(e, not label) for e, label in self.closures.get(d, ())
                 if (label is True or label is False) and graph.nodes[e].kind == TEST
                 and isinstance(graph.nodes[e].stmt, ast.If)}
        apart.add((d, True))
        return self._every_reader(names, lambda m, closure: m != d and not apart.isdisjoint(closure))

    def _loop_around(self, d: int) -> bool:
        in_loop = self._in_loop.get(d)
        if in_loop is None:
            parents = self.info.parents
            parent = parents.get(id(self.graph.nodes[d].stmt))
            while parent is not None and type(parent) not in LOOPS:
                parent = parents.get(id(parent))
            in_loop = self._in_loop[d] = parent is not None
        return in_loop

    def read_only_in_arm(self, d: int, label, names: frozenset) -> bool:
        """Whether the ``if`` at node ``d`` is outside any loop and every
        node that mentions one of ``names`` depends on its ``label`` arm or
        on the other one: with no loop around the ``if``, what one arm binds
        never reaches the other (a sender arm and a receiver arm each
        binding ``tensor`` for their own loops)."""
        if self._loop_around(d):
            return False
        own, other = (d, label), (d, not label)
        return self._every_reader(names, lambda m, closure: own in closure or other in closure)

    def _every_reader(self, names: frozenset, holds) -> bool:
        """Whether ``holds(node, its decisions)`` for every node that
        mentions one of ``names`` (False where a nested function or lambda
        mentions one: what it reads is unknown here)."""
        readers = self._readers
        if readers is None:
            readers = self._readers = self._index()
        closures = self.closures
        for name in names:
            nodes = readers.get(name)
            if nodes is None:
                continue
            if not nodes:
                return False
            for m in nodes:
                if not holds(m, closures.get(m, ())):
                    return False
        return True

    def nested_names(self) -> frozenset:
        """The names a nested function, class or lambda mentions."""
        readers = self._readers
        if readers is None:
            readers = self._readers = self._index()
        return frozenset(name for name, nodes in readers.items() if not nodes)

    def _index(self) -> dict:
        """name -> the nodes whose own expressions mention it; an empty
        tuple for a name a nested function, class or lambda mentions."""
        readers: dict = {}
        nested = set()
        known = self.names
        info = self.info
        for lambdas in info.lambdas_by_statement.values():
            for lam in lambdas:
                nested.update(sub.id for sub in walked(lam) if type(sub) is ast.Name)
        live = self.live
        for node in self.graph.nodes:
            stmt = node.stmt
            if stmt is None or node.id not in live:
                continue
            names = known.get(node.id)
            if names is None:
                names = known[node.id] = mentioned_names(node, info.node_info(node).exprs)
            for name in names:
                readers.setdefault(name, []).append(node.id)
            if type(stmt) in DEFINITIONS:
                nested.update(sub.id for sub in walked(stmt) if type(sub) is ast.Name)
        for name in nested:
            readers[name] = ()
        return readers


def mentioned_names(node, exprs: list) -> frozenset:
    """The names a CFG node's own expressions mention (and a ``for`` loop's
    target): every variable its transfer can read."""
    roots = list(exprs)
    stmt = node.stmt
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        roots.append(stmt.target)
    return frozenset(sub.id for root in roots for sub in walked(root) if type(sub) is ast.Name)




def names_bound(stmt) -> frozenset:
    """The local names a CFG node's statement may bind (its header only for
    a compound statement): targets, walrus targets, a mutated container."""
    if stmt is None:
        return frozenset()
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        roots = [stmt.target, stmt.iter]
    elif isinstance(stmt, (ast.While, ast.If)):
        roots = [stmt.test]
    elif isinstance(stmt, (ast.With, ast.AsyncWith)):
        roots = list(stmt.items)
    elif isinstance(stmt, COMPOUND_STATEMENTS) or isinstance(stmt, ast.ExceptHandler):
        return frozenset({stmt.name} if isinstance(getattr(stmt, "name", None), str) else ())
    else:
        roots = [stmt]
    names = set()
    for root in roots:
        for sub in walked(root):
            if type(sub) is ast.Name and type(sub.ctx) is not ast.Load:
                names.add(sub.id)
            elif type(sub) is ast.Call and type(sub.func) is ast.Attribute and type(sub.func.value) is ast.Name \
                    and sub.func.attr in MUTATORS:
                names.add(sub.func.value.id)  # ``xs.append(x)`` and the like
    return frozenset(names)


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
        if type(stmt) in DEFINITIONS:
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
    elif any(getattr(stmt, name, None) for name in _BLOCKS) or type(stmt) in DEFINITIONS:
        return []
    else:
        parts = [stmt]
    out = []
    for part in parts:
        out.extend(node for node in walked(part) if isinstance(node, ast.Call))
    return out


def assigned_past_return(block: list, decision: ast.AST) -> dict:
    """For ``decision``, a statement of ``block`` (a function's own body)
    that is an ``if`` with no ``else`` whose body ends in ``return``: key ->
    ``(statement of its body, statement of the rest of the block)`` of each
    assignment (:func:`_assignment_key`) both make, each at its own level
    before any ``return`` or ``raise`` (``if not ready: x = None; return``
    then ``...; x = None``): whichever way the test goes, the function leaves
    with that assignment made, so the test does not decide it."""
    if not isinstance(decision, ast.If) or decision.orelse or not decision.body \
            or not isinstance(decision.body[-1], ast.Return):
        return {}
    index = next((i for i, stmt in enumerate(block) if stmt is decision), None)
    if index is None:
        return {}
    sides = []
    for part in (decision.body, block[index + 1:]):
        if sides and not sides[0]:
            return {}  # the body makes no assignment: the rest need not be walked
        made = {}
        for stmt in part:
            key = _assignment_key(stmt)
            if key is not None:
                made.setdefault(key, stmt)
            elif holds_kind(stmt, _LEAVES):
                break
        sides.append(made)
    return {key: (stmt, sides[1][key]) for key, stmt in sides[0].items() if key in sides[1]}


def rebuilt_names(func: ast.AST, parents: dict, candidates: frozenset = None) -> dict:
    """name -> the :func:`_assignment_key` of every binding of that local
    name in ``func``, where each binding is the same call (``sock =
    context.socket(kind)`` first in the function's own body, then again in
    a handler that closes a socket that failed to bind, or under any other
    test): the name holds what that call returns on every rank, whichever
    binding ran last, so no test deciding which one did reaches it.  What
    the call's arguments carry still flows.  Only where the first binding
    is a statement of the function's own body (bound before any test),
    the name is no parameter, no other statement binds it (a loop, ``with
    ... as``, ``except ... as``, an import, a walrus, ``global``) and the
    call does not read the name itself (``x = step(x)`` run a rank-local
    number of times differs)."""
    args = getattr(func, "args", None)
    if args is None or not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or candidates is not None \
            and not candidates:
        return {}
    made = plain_bindings(func, lambda value: type(value) is ast.Call)
    out = {}
    for name, statements in made.items():
        if candidates is not None and name not in candidates or len(statements) < 2:
            continue
        key = _assignment_key(statements[0])
        if key is None or any(_assignment_key(stmt) != key for stmt in statements[1:]):
            continue
        first = min(statements, key=lambda stmt: (stmt.lineno, stmt.col_offset))
        if parents.get(id(first)) is not None:
            continue
        if any(type(sub) is ast.Name and sub.id == name for sub in fast_walk(first.value)):
            continue
        out[name] = key
    return out


def _assignment_key(stmt: ast.AST) -> Optional[tuple]:
    """``(target, callee, positional arguments)`` of ``x = f(a, b)`` (one
    target, a call as the value), ``(target, "=", constant)`` of ``x = None``;
    None for any other statement."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target, value = stmt.targets[0], stmt.value
    elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        target, value = stmt.target, stmt.value
    else:
        return None
    if isinstance(value, ast.Subscript) and _constant_index(value.slice):
        # an element of one container at a fixed position (``module =
        # model_chunks[0]`` / ``model_chunks[-1]``): the arms pick different
        # elements of the same container, which the values of the dataflow
        # do not tell apart
        return unparse(target), "[]", unparse(value.value)
    if isinstance(value, ast.Constant):
        return unparse(target), "=", repr(value.value)
    if not isinstance(value, ast.Call) or any(isinstance(a, ast.Starred) for a in value.args):
        return None
    return unparse(target), unparse(value.func), tuple(unparse(a) for a in value.args)


def _constant_index(index: ast.AST) -> bool:
    """``0``, ``-1``: an integer constant, not a slice or a computed index."""
    if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub):
        index = index.operand
    return isinstance(index, ast.Constant) and type(index.value) is int


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


def selects_own_part(stmt: ast.AST, parents: dict, blocks: Optional[dict] = None, sizes=()) -> bool:
    """Whether ``stmt`` is ``if <x> in <part>:`` (or ``if <x> not in <part>:
    continue``) inside a loop over the parts of a partition, ``<part>`` being
    the loop's own variable or assigned in its body (``for ranks in groups:
    g = new_group(ranks); if rank in ranks: self.group = g``).  The parts are taken to cover the ranks, as the
    groups of one parallel dimension do.  The groups of one rank each, tested
    by equality in a loop over a group's size (``if ranks[0] == rank:`` with
    ``ranks = [i]``, or ``if i == rank:``), are such a partition too
    (:func:`~cslint.analysis.membership.selects_own_pass`; ``sizes``: the module's
    :class:`~cslint.analysis.sizereads.SizeReads`)."""
    if not tests_membership(stmt):
        return tests_own_index(stmt) and selects_own_pass(stmt, parents, sizes)
    return _in_partition_loop(stmt, parents) or (blocks is not None and selects_listed_group(stmt, blocks))


def may_select_own_part(stmt: ast.AST) -> bool:
    """Whether ``stmt`` has a shape :func:`selects_own_part` may take, told
    from the statement alone (before a walker builds the parent links)."""
    return tests_membership(stmt) or tests_own_index(stmt)


def _in_partition_loop(stmt: ast.If, parents: dict) -> bool:
    part = stmt.test.comparators[0].id
    loop = parents.get(id(stmt))
    while loop is not None and not isinstance(loop, (ast.For, ast.AsyncFor)):
        if type(loop) in DEFINITIONS:
            return False
        loop = parents.get(id(loop))
    if loop is None:
        return False
    return part in target_names(loop.target) or any(
        isinstance(inner, ast.Assign) and any(part in target_names(t) for t in inner.targets)
        for inner in fast_walk(loop) if inner is not stmt)
