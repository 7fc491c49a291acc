"""The communicators the collectives a call issues are asked of, in the
calling function's terms (issue 12: results a user can trust; issue 14).

Arms that issue the same operation over the same group keep the ranks in
step only where they ask the same communicator for it: an arm calling a
PyNccl-style communicator's ``all_reduce`` and an arm calling
``dist.all_reduce`` on the device group reduce over the same ranks through
two NCCL communicators, and ranks in the one never meet peers in the other
(so do a gloo and an NCCL group made over one rank list).  A direct
collective names its communicator (``Site.route``,
:func:`~cslint.analysis.collectivegroups.issuing_route`); a call of a
function of the tree issues through what that function's collectives name,
each translated into the caller's terms where it is a parameter's (the
object the call passes there) or the function's own object's (the call's
receiver).  Where a route cannot be read so (a library helper over a fixed
group, a local of the callee, a cycle of calls), it is unknown: the arms
are then compared as before, by operation and group alone, so a helper
named for the operation and the group's own method still match.  The
functions of a call cycle are read together, each call from one to another
of them by unknown routes, so what one issues does not depend on which of
them a decision asks first.
"""

from __future__ import annotations

from typing import Optional

from .callrefs import call_offset
from .collectivegroups import got_object
from .constructiongroups import held_field_params
from .program import Program, bound_group, call_reaches, passed_argument
from .records import FuncFacts, IssuingRoute, Site
from .resolution import issued_collective
from .selfcalls import SELF_REFS


def site_routes(program: Program, site: Site, caller: Optional[FuncFacts], mode: frozenset, memo: dict) -> tuple:
    """``(name, group, route)`` of each collective the call ``site`` (of the
    function ``caller``, where known) issues or reaches, ``route`` the
    :class:`~cslint.analysis.records.IssuingRoute` in the caller's terms or
    None where it is unknown.  A direct collective is asked of its own
    communicator for everything it issues; a call of a function in a call
    cycle with ``caller`` issues by unknown routes (:func:`function_routes`)."""
    key = (id(site), mode, caller.key if caller is not None else None)  # (the answer reads the caller's cycle)
    found = memo.get(key)
    if found is not None and found[0] is site:
        return found[1]
    out: dict = {}
    direct = issued_collective(program.resolver, site) is not None
    if direct:
        name, group, _api = program.issued(site)
        out[(name, group, site.route)] = None
    if site.ref is not None:
        for target in program.resolver.resolve(site.ref):
            reach = program.reach.get((target.key, mode))
            if not reach:
                continue
            offset = call_offset(site, target)
            if not _in_cycle(caller, target, mode, memo):
                function_routes(program, target, mode, memo)  # (which may find the caller in a cycle with it)
            inner = {} if _in_cycle(caller, target, mode, memo) else memo[("function", target.key, mode)]
            for name, group in sorted(reach):
                if not call_reaches(program, site, target, mode, (name, group)):
                    continue
                bound = bound_group(site, target, offset, group, program)
                for route in sorted(inner.get((name, group), (None,)), key=_route_order):
                    out[(name, bound, site.route if direct else
                         _translated(program, route, site, target, offset, caller))] = None
    found = memo[key] = (site, tuple(out))
    return found[1]


def function_routes(program: Program, fn: FuncFacts, mode: frozenset, memo: dict) -> dict:
    """(name, group) -> the set of routes (None: unknown) by which ``fn``
    issues each collective it reaches, in its own terms.  The functions of
    a call cycle are read together (:func:`_solve_cycles`), each call from
    one to another of them issuing by unknown routes: what a function of it
    issues is the same whichever of them is asked first."""
    key = ("function", fn.key, mode)
    found = memo.get(key)
    if found is None:
        _solve_cycles(program, fn, mode, memo)
        found = memo[key]
    return found


def _in_cycle(caller: Optional[FuncFacts], target: FuncFacts, mode: frozenset, memo: dict) -> bool:
    """Whether ``caller`` and ``target`` are known to call each other (one cycle of calls)."""
    return caller is not None and target.key in memo.get(("cycle", caller.key, mode), ())


def _solve_cycles(program: Program, root: FuncFacts, mode: frozenset, memo: dict) -> None:
    """Fill the routes of ``root`` and of every function it reaches that is
    not read yet, a cycle of calls at a time, callees first (Tarjan's
    strongly connected components): each function's own sites are read once
    the cycles it calls out of are, its calls within its cycle by unknown
    routes."""
    number: dict = {}  # function key -> its visiting number
    low: dict = {}  # function key -> the lowest number reachable from it in the open part
    path: list = []  # the functions visited, not yet placed in a cycle
    on_path: set = set()
    calls_itself: set = set()  # function keys among their own callees (a cycle of one)
    work = [(root, iter(_callees(program, root, mode, memo)))]
    number[root.key] = low[root.key] = 0
    path.append(root)
    on_path.add(root.key)
    while work:
        fn, callees = work[-1]
        callee = next(callees, None)
        if callee is not None:
            if callee.key not in number:
                number[callee.key] = low[callee.key] = len(number)
                path.append(callee)
                on_path.add(callee.key)
                work.append((callee, iter(_callees(program, callee, mode, memo))))
            elif callee.key in on_path:
                low[fn.key] = min(low[fn.key], number[callee.key])
                if callee.key == fn.key:
                    calls_itself.add(fn.key)
            continue
        work.pop()
        if work:
            parent = work[-1][0]
            low[parent.key] = min(low[parent.key], low[fn.key])
        if low[fn.key] != number[fn.key]:
            continue
        cycle = []
        while True:
            member = path.pop()
            on_path.discard(member.key)
            cycle.append(member)
            if member is fn:
                break
        keys = frozenset(member.key for member in cycle)
        if len(cycle) > 1 or fn.key in calls_itself:
            for member in cycle:
                memo[("cycle", member.key, mode)] = keys
        for member in sorted(cycle, key=lambda member: member.key):
            table: dict = {}
            variant = program.variant(member, mode)
            for site in variant.sites if variant is not None else ():
                for name, group, route in site_routes(program, site, member, mode, memo):
                    table.setdefault((name, group), set()).add(route)
            memo[("function", member.key, mode)] = table


def _callees(program: Program, fn: FuncFacts, mode: frozenset, memo: dict) -> list:
    """The functions ``fn``'s sites call that reach a collective and whose
    routes are not read yet, by key (``fn`` itself among them where it calls
    itself: its routes are read once its cycle is)."""
    variant = program.variant(fn, mode)
    found: dict = {}
    for site in variant.sites if variant is not None else ():
        if site.ref is not None:
            for target in program.resolver.resolve(site.ref):
                if program.reach.get((target.key, mode)) \
                        and ("function", target.key, mode) not in memo:
                    found[target.key] = target
    return [found[key] for key in sorted(found)]


def routes_part(tables: list) -> bool:
    """Whether arms, each read as a table (operation, group) -> its routes
    (None: unknown), ask different communicators for one operation over one
    group: two arms that issue it, neither by an unknown route, by
    different sets of routes."""
    for key in set().union(*tables):
        seen = [table[key] for table in tables if key in table]
        if len(seen) < 2 or any(None in routes for routes in seen):
            continue
        if any(routes != seen[0] for routes in seen[1:]):
            return True
    return False


def _translated(program, route: Optional[IssuingRoute], site: Site, target: FuncFacts, offset: int,
                caller: Optional[FuncFacts]) -> Optional[IssuingRoute]:
    """``route``, a route of ``target``, as the call ``site`` names it: a
    parameter's object is what the call passes there
    (:func:`~cslint.analysis.program.passed_argument`, a field a
    constructor sets from one included), the target's own object
    (``self``) the call's receiver; an object a module function's call
    gives (``get_tp_group()``) and a library function's default group are
    the same in any function.  None where the call does not say, or names
    it by a text that is not the caller's own (a local, a group's name)."""
    if route is None or not route.handle:
        return route
    head, _, rest = route.handle.partition(".")
    if "(" in head:
        return route
    if head not in target.params:
        return None  # a local or a global of the callee
    own = offset and target.self_offset and head == target.params[0]
    if own and site.ref.tag in SELF_REFS:
        return route
    if own and not held_field_params(program, target):
        # the receiver as the call writes it (``Site.group_args`` may hold a
        # group's name for it: ``group = _groups[name]()`` passes ``name``)
        passed = site.callee.rpartition(".")[0]
    else:
        argument = passed_argument(site, target, offset, route.handle, program)
        if argument is None:
            return None
        passed, _name, _position, rest = argument
    if not passed:
        return None
    passed_head = passed.partition(".")[0]
    if "(" not in passed_head and (caller is None or passed_head not in caller.params):
        return None
    return IssuingRoute(route.api, got_object(f"{passed}.{rest}" if rest else passed))


def _route_order(route: Optional[IssuingRoute]) -> tuple:
    return ("",) if route is None else (route.api, route.handle)
