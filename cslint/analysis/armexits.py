"""Names an ``if`` arm binds, read in that arm and past it (issue 14 §2.4).

A rank reading a name inside the arm of an ``if`` that bound it took that
arm, as every rank reading it there did: the test that chose the arm tells
those readers nothing apart, so what the name holds there is what its value
reads alone::

    payload = cache.get(key)              # this rank's own cache
    if payload is None:
        payload = share(records)          # what a broadcast handed every rank
        if not valid(payload):            # read by ranks that all missed alike
            payload = tune()

The test does tell apart the ranks that took the arm from those that did
not, so the names the arm binds take its implicit flow on every way out of
the arm (the edge to the statement after the ``if``, a ``continue``, a
``break``, an exception leaving it, a loop's way round), where ranks that
did not take it may read them too.  The CFG dataflow leaves the test out of
the implicit flow into the names such a binding binds (:func:`arm_exits`'
skips) and adds it back on those edges (its gates).

Only a plain assignment of one local name counts (``x = ...``, ``x: T =
...``; no field, element, unpacking or augmented store, and none whose
binding the transfer shapes: :func:`_plain_binding`), in a function (not
a module's own code, whose names are globals other functions read), where
no nested function, lambda or class mentions the name (a closure built in
the arm may be called past it), none declares it ``global`` or
``nonlocal``, and no pipeline relay hands it on (:mod:`cslint.analysis.relays`
agrees it on both ways past the receive's arm).  A test the dataflow
already leaves out for the binding (one every reader took alike, an
``if``/``else`` both arms of which bind alike) needs no gate."""

from __future__ import annotations

import ast
from typing import Optional

from . import cfg as cfgmod
from .arms import names_bound
from .astwalk import BLOCKS_OF, DEFINITIONS, LOOPS
from .atoms import CONTENTS, SIZED, project, whole
from .copies import copies_itself, resizes_itself
from .evaluator import unwrapped_iterable
from .localdicts import key_own_entry
from .relays import relay_edges
from .stores import built_comprehension, split_sizes
from .vocabulary import MUTATORS

def arm_exits(dataflow) -> tuple:
    """``(skips, gates)`` of ``dataflow`` (see the module): ``skips``: node
    -> the ``if`` tests left out of the implicit flow into the names it
    binds; ``gates``: (node, successor) -> ((test node, names), ...), the
    edges out of such an arm and the names each adds the test's implicit
    flow to."""
    graph, info = dataflow.graph, dataflow.info
    if not isinstance(info.func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return {}, {}  # a module's names are globals other functions read
    nodes, closures = graph.nodes, dataflow.closures
    shielded = None
    arms: dict = {}  # (test node, arm label) -> {name: the plain bindings of it there}
    for n in dataflow.live:
        node = nodes[n]
        stmt = node.stmt
        if node.kind != cfgmod.STMT or (type(stmt) is not ast.Assign and type(stmt) is not ast.AnnAssign) \
                or not any(_if_arm(nodes[d], label) for d, label in closures.get(n, ())):
            continue
        name = _plain_binding(dataflow, node, stmt)
        if name is None or dataflow.single_rank(n):
            continue
        if shielded is None:
            shielded = _shielded_names(dataflow)
        if name in shielded:
            continue
        alike = dataflow.tests_read_alike(n)
        for d, label in dataflow.deciders(n):
            if _if_arm(nodes[d], label) and d not in alike and _in_arm(info.parents, stmt, nodes[d].stmt, label):
                arms.setdefault((d, label), {}).setdefault(name, []).append(n)
    skips: dict = {}
    gates: dict = {}
    bound_at: dict = {}  # node -> names_bound of its statement (nested arms share nodes)
    for (d, label), bound in arms.items():
        stmt = nodes[d].stmt
        inside = _arm_nodes(graph, stmt.body if label else stmt.orelse)
        names = frozenset(bound) - _bound_without(dataflow, d, inside, bound, bound_at)
        if not names:
            continue
        for name in names:
            for n in bound[name]:
                skips.setdefault(n, set()).add(d)
        gate = (d, names)
        for u in inside:
            if u not in dataflow.live or dataflow.single_rank(u):
                continue  # only a group of one rank leaves there: nothing it carries differs
            for succ, _edge in nodes[u].succs:
                if succ not in inside:
                    gates.setdefault((u, succ), []).append(gate)
    return {n: frozenset(found) for n, found in skips.items()}, {key: tuple(found) for key, found in gates.items()}


def _if_arm(node, label) -> bool:
    """Whether ``label`` is an arm of the ``if`` test ``node``."""
    return (label is True or label is False) and node.kind == cfgmod.TEST and type(node.stmt) is ast.If


def _bound_without(dataflow, d: int, inside: frozenset, bound: dict, bound_at: dict) -> frozenset:
    """The names of ``bound`` some other binding in the arm (``inside``)
    binds without test ``d`` in what it binds (a binding both arms make
    alike, one every reader took alike, one only a group of one rank
    runs): on a way out past it the name does not differ by ``d``, and the
    gate, which cannot tell which binding reached it, would add ``d``."""
    found = set()
    nodes, live = dataflow.graph.nodes, dataflow.live
    for m in inside:
        if m not in live:
            continue
        names = bound_at.get(m)
        if names is None:
            names = bound_at[m] = names_bound(nodes[m].stmt)
        for name in names & bound.keys():
            if m in bound[name]:
                continue
            if dataflow.single_rank(m) or d in dataflow.tests_read_alike(m) \
                    or all(e != d for e, _label in dataflow.deciders(m)):
                found.add(name)
    return frozenset(found)


def _plain_binding(dataflow, node, stmt) -> Optional[str]:
    """The one local name ``stmt`` (an assignment, CFG node ``node``)
    binds to its value and the implicit flow as they stand (``x = f(y)``,
    ``x: T = f(y)``; the keys of a dict it holds take the same flow); None
    for a name whose binding the transfer shapes otherwise (a dict
    display's keys, a comprehension's or a split's length, a container
    stored into bound to a call's result, an object declared to be one
    class, the name's own object moved, copied, wrapped or resized: ``model =
    model.to(device)``, ``plan = dataclasses.replace(plan, n=1)``, ``xs =
    tqdm(xs)``, ``x = F.pad(x, widths)``), and where a walrus or a
    mutating call binds beside it."""
    target = stmt.targets[0] if type(stmt) is ast.Assign else stmt.target
    value = stmt.value
    if type(target) is not ast.Name or value is None or (type(stmt) is ast.Assign and len(stmt.targets) != 1):
        return None
    name, info = target.id, dataflow.info
    call = type(value) is ast.Call
    if type(value) is ast.Dict or built_comprehension(value) is not None or split_sizes(value) is not None \
            or (call and name in info.element_stores):
        return None
    if call and ((type(value.func) is ast.Attribute and type(value.func.value) is ast.Name
                  and value.func.value.id == name) or _is_name(unwrapped_iterable(value), name)
                 or copies_itself(value, target, info.ctx.imports)) or resizes_itself(value, target, info.ctx.imports):
        return None
    facts = info.node_info(node)
    if facts.walrus or any(_mutates(call_info.call) for call_info in facts.calls):
        return None
    return None if name in dataflow.transfer.declared_objects() else name


def _is_name(expr, name: str) -> bool:
    return type(expr) is ast.Name and expr.id == name


def _mutates(call) -> bool:
    """Whether ``call`` mutates a local container (``xs.append(x)``)."""
    func = call.func
    return type(func) is ast.Attribute and type(func.value) is ast.Name and func.attr in MUTATORS


def _shielded_names(dataflow) -> frozenset:
    """Names a function, lambda or class nested in the function mentions,
    those it declares ``global`` or ``nonlocal``, and those a pipeline relay
    hands on."""
    graph, info = dataflow.graph, dataflow.info
    out = set(dataflow._arm_reads.nested_names())
    for node in graph.nodes:
        if type(node.stmt) is ast.Global or type(node.stmt) is ast.Nonlocal:
            out.update(node.stmt.names)
    for _groups, names, _entry in relay_edges(graph, info.func, info.ctx.knowledge, info.callee_names).values():
        out.update(names)
    return frozenset(out)


def _in_arm(parents: dict, stmt, test_stmt: ast.If, label: bool) -> bool:
    """Whether ``stmt`` lies in the arm of ``test_stmt`` the edge ``label`` takes."""
    arm = test_stmt.body if label else test_stmt.orelse
    child, parent = stmt, parents.get(id(stmt))
    while parent is not None:
        if parent is test_stmt:
            return any(child is s for s in arm)
        child, parent = parent, parents.get(id(parent))
    return False


def _arm_nodes(graph, arm: list) -> frozenset:
    """The CFG nodes of the statements (handlers, cases) of ``arm``."""
    found = set()
    stmt_nodes = graph.stmt_nodes
    stack = list(arm)
    while stack:
        stmt = stack.pop()
        ids = stmt_nodes.get(id(stmt))
        if ids:
            found.update(ids)
        for field in BLOCKS_OF[type(stmt)]:
            inner = getattr(stmt, field, None)
            if inner:
                stack.extend(inner)
    return frozenset(found)


def gated(dataflow, gates: tuple, out: dict, fork) -> dict:
    """``out`` with each gate's test's implicit flow added to the names it
    names (and to their own structures and dict keys, where kept apart)."""
    refined = None
    keyed = dataflow.info.dict_keys
    for d, names in gates:
        test = dataflow.cond_atoms(d)
        atoms = project(CONTENTS, test) if dataflow.selects_own_part(d) else whole(test)  # as implicit flow
        if not atoms:
            continue
        own_part = dataflow.selects_own_part(d)
        for name in names:
            if not own_part and dataflow.binds_tensor_either_way(d, name):
                # a tensor either way: the arm decides what it holds and its size (tensorarms.py)
                refined = _widened(out, refined, fork, (name, ("own", name)), project(SIZED, test))
                continue
            keys = (name, ("own", name), *(entry for key in keyed.get(name, ())
                                           for entry in (("key", name, key), key_own_entry(name, key))))
            refined = _widened(out, refined, fork, keys, atoms)
    return out if refined is None else refined


def _widened(out, refined, fork, keys, added):
    """``refined`` with ``added`` joined into each of ``keys`` that ``out`` binds; a
    fork of ``out`` is made at the first key that grows (None while none has)."""
    for key in keys:
        value = (refined if refined is not None else out).get(key)
        if value is None or added <= value:
            continue
        if refined is None:
            refined = fork(out)
        refined[key] = value | added
    return refined


def leaving_tests(info, graph) -> dict:
    """{test node: (label of the arm that leaves, loop left or None)}: the
    ``if`` tests one arm of which leaves the function (it ends in
    ``return``/``raise``) or the loop around the test (it ends in
    ``break``), with no ``continue`` or ``break`` of that loop on the way
    and no ``finally`` around that runs on the way out (the dataflow's
    other way past an arm: those who stay all took the other one); and
    the ``assert`` statements whose failure leaves the function uncaught
    (``unhandled-exceptions = "hang"``: the ranks it fails on are gone,
    those past it all held the test), with no ``finally`` around."""
    found: dict = {}
    for node in graph.nodes:
        if node.kind == cfgmod.ASSERT:
            if graph.leaves_uncaught(node.id) and not _in_finally_try(info, node.stmt):
                found[node.id] = ("fail", None)
            continue
        if node.kind != cfgmod.TEST or not isinstance(node.stmt, ast.If):
            continue
        arms = [(label, _leaves(arm)) for label, arm in ((True, node.stmt.body), (False, node.stmt.orelse))]
        leaving = [(label, how) for label, how in arms if how is not None]
        if len(leaving) != 1:
            continue
        label, how = leaving[0]
        loop = None
        parent = info.parents.get(id(node.stmt))
        child = node.stmt
        while parent is not None:
            if isinstance(parent, ast.Try) and parent.finalbody:
                break  # the leaving ranks still run the ``finally``, which may read what stayed
            if how == "function" and isinstance(parent, ast.Try) and parent.handlers \
                    and any(child is stmt for stmt in parent.body):
                break  # a handler here may catch the raise: those ranks stay
            child = parent
            if loop is None and type(parent) in LOOPS:
                loop = parent
            parent = info.parents.get(id(parent))
        else:
            if how == "function":
                found[node.id] = (label, None)
            elif loop is not None:
                found[node.id] = (label, loop)
    return found


def rejoining_tests(info, graph) -> frozenset:
    """The ``if`` test nodes every way out of whose arms is either the
    statement after the ``if`` or out of the function (a ``return``, a
    ``raise`` or a failing ``assert`` nothing in the function catches, work
    failing on this rank alone under ``unhandled-exceptions = "hang"``): no
    ``break`` or ``continue`` of a loop around, no ``try`` around it whose
    handlers may catch what its arms raise, no ``finally`` around.  A rank
    that reaches a statement past such an ``if`` went through one arm or
    the other and fell through: which one it took decides nothing of
    whether it is there (the exits inside the arms are decisions of their
    own), and the ranks that left the function never read its local names
    again.  Only a test with an exit inside an arm is a decision for what
    follows it at all."""
    found = []
    for node in graph.nodes:
        if node.kind != cfgmod.TEST or type(node.stmt) is not ast.If:
            continue
        stmt = node.stmt
        if any(_jumps_in_loop(inner) for inner in stmt.body) or any(_jumps_in_loop(inner) for inner in stmt.orelse):
            continue
        if _caught_around(info, stmt):
            continue
        found.append(node.id)
    return frozenset(found)


def _caught_around(info, stmt: ast.AST) -> bool:
    """Whether a ``try`` of the function holds ``stmt`` in its body with
    handlers (which may catch what leaves it), or with a ``finally`` (which
    runs on the way out, and may read what stayed)."""
    child = stmt
    parent = info.parents.get(id(stmt))
    while parent is not None:
        if isinstance(parent, ast.Try) or type(parent).__name__ == "TryStar":
            if parent.finalbody or (parent.handlers and any(child is inner for inner in parent.body)):
                return True
        child = parent
        parent = info.parents.get(id(parent))
    return False


def _in_finally_try(info, stmt: ast.AST) -> bool:
    """Whether a ``try`` with a ``finally`` holds ``stmt``."""
    parent = info.parents.get(id(stmt))
    while parent is not None:
        if (isinstance(parent, ast.Try) or type(parent).__name__ == "TryStar") and parent.finalbody:
            return True
        parent = info.parents.get(id(parent))
    return False


def _leaves(arm: list):
    """``"function"`` when every path through a block ends in ``return`` or
    ``raise``, ``"loop"`` when it ends in ``break`` (with no ``continue`` or
    ``break`` of the loop around it before), else None."""
    if not arm:
        return None
    last = arm[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        how = "function"
    elif isinstance(last, ast.Break):
        how = "loop"
    else:
        return None
    for stmt in arm[:-1]:
        if _jumps_in_loop(stmt):
            return None
    return how


def _jumps_in_loop(stmt: ast.AST) -> bool:
    """A ``break``/``continue`` of the enclosing loop within ``stmt`` (not of a loop nested in it)."""
    if isinstance(stmt, (ast.Break, ast.Continue)):
        return True
    if type(stmt) in LOOPS:
        return any(_jumps_in_loop(s) for s in stmt.orelse)
    if type(stmt) in DEFINITIONS:
        return False
    for name in ("body", "orelse", "finalbody", "handlers", "cases"):
        for child in getattr(stmt, name, None) or ():
            if _jumps_in_loop(child):
                return True
    return False
