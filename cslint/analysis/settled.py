"""Exits a collective settles.

A test one arm of which leaves the function, with no collective on the way,
while every path of its other arm enters a collective before the function
ends (``if not usable: return`` then ``handles = exchange(group)``): a rank
that left never enters that collective, so the members that stayed wait in
it for ever.  In every run that goes on, the members of that collective's
group took the same arm.  What the function hands on past the test (the
fields it writes, what it returns) therefore differs by that test only as
far as the group leaves it, as a value agreed over the group does
(:class:`~cslint.analysis.atoms.CollectiveResult`): a communicator's
``disabled`` flag, cleared only after the shared buffers are exchanged, is
not decided again by each method that reads it.  The collective sites the
test decides are still judged by the test itself (guards.py): that is where
the ranks part, and where it is reported, once.

A statement that itself enters a collective settles such a test for what it
writes, even where other paths past the test enter none
(``self.supported = all_ranks_true(group, ok)`` past ``if not
peers_ok(rank): return``): a rank that writes there has entered that
collective, which the ranks that left never enter, so in every run that
goes on the members of its group all wrote, and wrote what the collective
agreed.

A path past the test that only a rank with some part of the test the other
way can take does not count against the settling (``if same_node and not
peers_ok(rank): return``, then ``if same_node: exchange(group)``): where
that part is the same on every member, a rank leaving means every member
has it as the leaving one did.  Its own value stays in what the test hands
on, so the settling holds only as far as that part agrees.
"""

from __future__ import annotations

import ast
from typing import Optional

from ..presets import ALL_DIMS
from .astwalk import children_into
from .atoms import whole
from .callrefs import func_ref
from .cfg import TEST
from .correlated import decided_by, held_where, reads_fixed_names
from .results import issues_itself
from .scope import canonical_text
from .syntax import dotted, first_exit
from .flows import Flow

#: how many calls deep :func:`_always_issued` follows the file's functions
_CALL_DEPTH = 3


def settled_exits(dataflow) -> dict:
    """{decision node: the group of the collective that settles it} of a
    solved :class:`~cslint.analysis.dataflow.Dataflow`, worked out once."""
    return _exits(dataflow)[0]


def _exits(dataflow) -> tuple:
    """(:func:`settled_exits`, the quiet exits: the decision nodes of tests
    one arm of which leaves the function entering no collective on the way,
    {settled exit: the parts of its test the settling took as agreed}:
    :func:`_find`)."""
    found = dataflow.__dict__.get("_settled_exits")
    if found is None:
        found = dataflow.__dict__["_settled_exits"] = _find(dataflow)
    return found


def settled_flow(dataflow, n: int, env: dict) -> Flow:
    """The :class:`Flow` that hands on what node ``n`` writes to fields and
    returns: the implicit flow of a test some collective settles
    (:func:`settled_exits`) comes as agreed over that collective's group, and
    so does that of any other quiet exit where ``n`` itself surely enters a
    collective (:func:`_entered_at`)."""
    settled, quiet, assumed = _exits(dataflow)
    deciding = [d for d, _label in dataflow.closures.get(n, ()) if d in quiet] if quiet else None
    if not deciding:
        return dataflow.flow_at(n, env)
    own = None
    mine = {}
    for d in deciding:
        group = settled.get(d)
        if group is None:
            if own is None:
                own = _entered_at(dataflow, n)
            group = own
        if group:
            mine[d] = group
    if mine:
        return dataflow.flow_at(n, env, _settled_implicit(dataflow, n, mine, assumed))
    return dataflow.flow_at(n, env)


def settled_call_implicit(dataflow, n: int, call: ast.Call) -> frozenset:
    """What decides whether ``call`` (made at node ``n``) runs
    (:meth:`~cslint.analysis.dataflow.Dataflow.call_implicit`), a test some
    collective settles coming as agreed over that collective's group: in a
    run that goes on, the members of that group all make the call or none
    does, so what the called method writes to this object's fields is not
    decided again by that test."""
    settled, _quiet, assumed = _exits(dataflow)
    if not settled:
        return dataflow.call_implicit(n, call)
    mine = {d: settled[d] for d, _label in dataflow.closures.get(n, ()) if d in settled}
    if not mine:
        return dataflow.call_implicit(n, call)
    return _settled_implicit(dataflow, n, mine, assumed, call)


def _entered_at(dataflow, n: int) -> str:
    """The group of a collective the statement of node ``n`` surely enters
    ("" for none), asked only of a statement that writes a field or returns
    a value: the rank that writes has passed that collective."""
    node = dataflow.graph.nodes[n]
    stmt = node.stmt
    kind = type(stmt)
    if kind is ast.Return:
        if stmt.value is None:
            return ""
    elif kind in (ast.Assign, ast.AnnAssign, ast.AugAssign):
        targets = stmt.targets if kind is ast.Assign else [stmt.target]
        if stmt.value is None or all(type(target) is ast.Name for target in targets):
            return ""
    else:
        return ""
    return _collective_group(dataflow.info, node)


def _settled_implicit(dataflow, n: int, settled: dict, assumed: dict, call: Optional[ast.Call] = None) -> frozenset:
    met = []

    def by_collective(d: int, _label) -> bool:
        if d in settled:
            met.append(d)
            return True
        return False

    atoms = dataflow.implicit_without(n, by_collective) if call is None else \
        dataflow.call_implicit(n, call, by_collective)
    agree = dataflow.info.ctx.atoms.collective
    for d in dict.fromkeys(met):
        found = dataflow.cond_atoms(d)
        if found:
            atoms = atoms | agree(settled[d], whole(found))
        if d in assumed:
            env = dataflow.envs.get(d, {})
            for part in assumed[d]:
                atoms = atoms | dataflow.evaluator.truth(part, env)
    return atoms


def _find(dataflow) -> tuple:
    """Each quiet exit, and the group of the collective every path of the
    staying arm enters.  A path on which a part of the exit's test reads
    the other way than it does on the leaving ranks is left out
    (``if shared and not peers_ok(rank): return`` then ``if shared:
    exchange(group)``): where that part is the same on every member and
    some rank left, every member has it as the leaving ranks had, so the
    ones that stayed take the exchange.  The settling then holds only as
    far as those parts agree, so what they read stays in what the test
    hands on (the third element: {exit: those parts})."""
    out = {}
    quiet = set()
    assumed = {}
    graph = dataflow.graph
    world = dataflow.info.ctx.knowledge.world
    groups: dict = {}  # node -> the group of the collective it surely enters, "" for none

    def group_of(m: int) -> str:
        found = groups.get(m)
        if found is None:
            found = groups[m] = _collective_group(dataflow.info, graph.nodes[m])
        return found

    for d, (label, loop) in dataflow.leaving.items():
        if loop is not None or d not in dataflow.live:
            continue
        succs = graph.nodes[d].succs
        left = [m for m, edge in succs if edge is label]
        stayed = [m for m, edge in succs if edge is (not label)]
        if not left or not stayed or _met(graph, left, lambda m: _may_enter(dataflow.info, graph.nodes[m]), stop=False):
            continue
        quiet.add(d)
        group = _one_group(world, _met(graph, stayed, group_of, stop=True))
        if group is None:
            held = held_where(graph.nodes[d].stmt.test, label)
            pruned = []
            if held:
                group = _one_group(world, _met(graph, stayed, group_of, stop=True, held=held, pruned=pruned))
            # (asked last: which names the function binds once is a walk of its whole body)
            if group is not None and not (pruned and reads_fixed_names(dataflow.info, held)):
                group = None
            if group is not None:
                assumed[d] = tuple(part for part, _truth in held.values())
        if group is not None:
            out[d] = group
    return out, frozenset(quiet), assumed


def _one_group(world, met: Optional[set]) -> Optional[str]:
    """The one group of the collectives :func:`_met` met (None for none or several)."""
    if met is not None and len(met) > 1 and all(world.span(group) >= ALL_DIMS for group in met):
        met = {min(met)}  # groups the world cannot tell apart: each spans every dimension
    return next(iter(met)) if met is not None and len(met) == 1 else None


def _met(graph, start: list, group_of, stop: bool, held: Optional[dict] = None,
         pruned: Optional[list] = None) -> Optional[set]:
    """The groups of the collectives met walking from ``start``.  With
    ``stop``: each path ends at its first collective, and None when some
    path reaches the function's end without one.  An ``if`` whose test the
    parts ``held`` decide (:func:`~cslint.analysis.correlated.decided_by`)
    is walked on that arm alone, noted in ``pruned``."""
    seen, stack, met = set(start), list(start), set()
    while stack:
        m = stack.pop()
        group = group_of(m)
        if group:
            met.add(group)
            if stop:
                continue
        if m == graph.exit:
            if stop:
                return None
            continue
        node = graph.nodes[m]
        arm = decided_by(node.stmt.test, held) if held and node.kind == TEST and type(node.stmt) is ast.If else None
        if arm is not None:
            pruned.append(m)
        for succ, edge in node.succs:
            if arm is not None and edge is (not arm):
                continue
            if succ not in seen:
                seen.add(succ)
                stack.append(succ)
    return met


def _may_enter(info, node) -> str:
    """Whether ``node`` may enter a collective: it calls one, a function of
    the file that reaches one, or a function of that name the tree found to
    reach one ("" for none: a leaving arm that may enter one can pair up
    with the collective of the other arm, and the run go on split)."""
    if node.stmt is None:
        return ""
    ctx = info.ctx
    for call_info in info.node_info(node).calls:
        if call_info.match is not None:
            return "collective"
        func = call_info.call.func
        name = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else None
        if name in ctx.deep_names:
            return "collective"
        ref = info.resolve_ref(func)
        if ref is not None and issues_itself(ref, ctx, info.class_key):
            return "collective"
    return ""


def _collective_group(info, node) -> str:
    """The group of a collective node ``node`` surely enters: one it calls,
    or a function of the file it calls that enters one before anything in
    it can return (:func:`_always_issued`); "" for none."""
    if node.stmt is None:
        return ""
    for call_info in info.node_info(node).calls:
        if call_info.inline:
            continue  # under a conditional expression, a short-circuit or in a comprehension
        if call_info.match is not None:
            return call_info.match.group
        ref = info.resolve_ref(call_info.call.func)
        if ref is not None and issues_itself(ref, info.ctx, info.class_key):
            group = _always_issued(info.ctx, ref, _CALL_DEPTH)
            if group:
                return group
    return ""


def _always_issued(ctx, ref, depth: int) -> str:
    """The group of a collective that the file's function ``ref`` calls in
    its own body before any statement that may leave it; "" for none."""
    qualname = ref.qualname if ref.tag == "func" else f"{ref.class_key.partition(':')[2]}.{ref.name}"
    function = ctx.definitions().get(qualname)
    if function is None:
        return ""
    return _issued_first(ctx, function.body, depth, set(), False)


def _issued_first(ctx, stmts: list, depth: int, rank_lists: set, in_loop: bool) -> str:
    """The group of a collective ``stmts`` call before any statement that
    may leave them; a loop over a process group's rank list counts as run
    (the group holds this rank: ``ranks = dist.get_process_group_ranks(g)``,
    then ``for i, rank in enumerate(ranks):``)."""
    for stmt in stmts:
        kind = type(stmt)
        if kind is ast.For and not stmt.orelse and _over_group_ranks(stmt.iter, rank_lists):
            group = _issued_first(ctx, stmt.body, depth, rank_lists, True)
            if group:
                return group
        if kind not in (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign):
            if first_exit(stmt, in_loop) is not None or kind in (ast.Try, ast.With, ast.AsyncWith):
                return ""
            continue
        if kind is ast.Assign and len(stmt.targets) == 1 and type(stmt.targets[0]) is ast.Name \
                and _over_group_ranks(stmt.value, ()):
            rank_lists.add(stmt.targets[0].id)
        for sub in _certain_calls(stmt):
            raw = dotted(sub.func)
            match = ctx.match_collective(sub, raw, canonical_text(raw, ctx.imports)) if raw else None
            if match is not None:
                return match.group
            if depth > 1 and raw in ctx.issuing_functions:  # a module-level function of the file
                group = _always_issued(ctx, func_ref(ctx.module, raw), depth - 1)
                if group:
                    return group
    return ""


def _over_group_ranks(expr, rank_lists) -> bool:
    """Whether ``expr`` is a process group's rank list (a call of
    ``get_process_group_ranks``, a name bound to one), or ``enumerate`` or
    ``sorted`` of one: never empty, as the group holds this rank."""
    if type(expr) is ast.Call and type(expr.func) is ast.Name and expr.func.id in ("enumerate", "sorted") and expr.args:
        expr = expr.args[0]
    if type(expr) is ast.Name:
        return expr.id in rank_lists
    return type(expr) is ast.Call and (dotted(expr.func) or "").rpartition(".")[2] == "get_process_group_ranks"


#: expressions whose parts may not all run
_CONDITIONAL = (ast.IfExp, ast.BoolOp, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _certain_calls(stmt) -> list:
    """The calls ``stmt`` surely makes: none under a conditional expression,
    a short-circuit, a comprehension or a lambda."""
    out, stack = [], [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, _CONDITIONAL):
            continue
        if type(node) is ast.Call:
            out.append(node)
        children_into(node, stack)
    return out
