"""Hazards: call sites that issue or reach a collective under a condition that
may differ between the ranks of the collective's group.

The decisions are made here from the answers of
:class:`~cslint.analysis.uniformity.UniformityInfo`, site by site: a
condition counts when it may differ over the group, unless both sides of it
issue the same collectives, and a loop counts only when its *number* of
iterations may differ (a sampler that shards by rank keeps every rank's
length).  The innermost such condition of a site makes its hazard; the rules
(:mod:`cslint.rules`) turn hazards into findings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .announced import announced
from .callerreports import SAME_LENGTH_KINDS, callers_of, report_at_callers
from .atoms import DECIDES_NO_TEST, Source, calls_read
from .processes import apart_from
from .contexts import decided_by_callers
from .divergence import links_dropped, shown_links
from .feasibility import FIRST_RANK_ROOT
from .records import Cond, Site
from .retries import retried_in_step
from .roles import role_ways, roles_agree
from .uniformity import UniformityInfo, own_field



@dataclass
class Hazard:
    kind: str  # branch | early-exit | loop | exception
    path: str
    function: str
    site: Site
    cond: Cond
    collective: str
    group: str
    api: str
    reach_chain: tuple  # ((path, line, note), ...) from the call down to the collective
    source: Source  # where the divergence comes from
    source_dims: frozenset
    via: tuple  # ((path, line, note), ...) flows from the source to the condition, as an explanation shows them
    modes: tuple = ()  # mode names the hazard needs (empty: in every configuration)
    region_collectives: int = 1
    direct: bool = True
    #: the collective's fix facts (CallFacts) as seen from this function:
    #: its communicator and group argument named the way this function can
    collective_facts: Optional[tuple] = None
    # -- what the rules weigh for their confidence and fixes -----------------------------
    #: calls on the flow that may have agreed the value already (AgreedValue, ...)
    agreed: tuple = ()
    #: the flow entered an object through its constructor
    constructed: bool = False
    #: the flow is longer than its explanation (MAX_VIA links)
    flow_cut: bool = False
    #: the flow as the pass keeps it (up to MAX_KEPT_VIA links, past the
    #: explanation's): the fields it passes beyond the links shown decide
    #: whether it reads a divergence reported upstream
    flow: tuple = ()
    #: some call between the site and the collective is itself conditional
    conditional_reach: bool = False
    #: the flow went through a field only other event loops write (see FlowFacts)
    other_loop: Optional[tuple] = None
    #: early exits: the other exits of the same kind before the site whose
    #: conditions also differ over the group, ``((cond, operands_divergent), ...)``;
    #: the hazard names the nearest, and a fix that enters the collective
    #: must defer them all
    other_exits: tuple = ()
    #: every group the call at the site reaches a collective over, sorted
    reached_groups: tuple = ()
    #: ``and``/``or`` tests: whether each top-level operand may differ over the group
    operands_divergent: tuple = ()
    #: an object another method already broadcasts over a group covering
    #: every collective the site reaches (ScheduleCarrier), or None
    carrier: Optional[tuple] = None
    #: early exits: the exit returns nothing (``return``/``return None``,
    #: ``return None, None``) and a caller leaves its event loop when the
    #: call's result is missing (``batch = self.f(); if batch is None: break``
    #: in a ``while True``), so the exit leaves that loop through the caller
    ends_callers_event_loop: bool = False
    #: early exits: the exit returns a value, and some caller tests the
    #: call's result in a condition that decides a collective: a rank that
    #: keeps its own result where the others return the gathered verdict
    #: parts from them at that caller
    result_decides_callers: bool = False
    #: the flow went through a field written where another hazard's
    #: condition has parted the ranks (inside its body, or past its early
    #: exit: :func:`_parted`), one whose own explanation raises no strong
    #: doubt: ``(field text, that condition's guard line, its site's line, the
    #: path, whether the field is set past an early exit)``; None otherwise
    upstream: Optional[tuple] = None
    #: every flow that makes the condition differ goes through fields set
    #: inside other reported conditions (see :func:`_fold_downstream`): the
    #: root-cause report leaves the hazard out, the per-site one keeps it
    downstream_only: bool = False
    #: the key of the function the site is in
    function_key: Optional[str] = None
    #: where the condition is, when not in ``path``: a hazard reported at a
    #: caller's call site (see :func:`~cslint.analysis.callerreports.report_at_callers`) keeps the callee's
    #: condition, in the callee's file
    cond_path: str = ""
    #: and the function it is in (qualified name)
    cond_function: str = ""


def find_hazards(info: UniformityInfo) -> list:
    """Every hazard of the tree, in (path, line, column) order; a site that
    is a hazard under some mode assignments only names them."""
    found: dict = {}
    loop_deciders, deciders = _result_deciders(info)
    for fn, mode, variant in info.functions():
        for site in variant.sites:
            reached = info.collectives_reached(site, mode, caller=fn)
            if not reached:
                continue
            hazard = _site_hazard(info, fn, variant, site, reached, mode)
            if hazard is None:
                continue
            hazard.ends_callers_event_loop = fn.key in loop_deciders and _returns_nothing(hazard.cond)
            hazard.result_decides_callers = fn.key in deciders and _returns_value(hazard.cond)
            hazard.function_key = fn.key
            key = (fn.path, site.span.line, site.span.column, fn.key)
            found.setdefault(key, []).append((hazard, mode))
    decided = _decided_by_callers(info, found)
    _mark_reported_upstream(info, [hazard for per_mode in found.values() for hazard, _mode in per_mode])
    _fold_downstream(info, found)
    if decided:
        _leave_out_decided(found, decided)
        # the hazards that now carry a left-out site's root cause are reported
        # themselves: what reads their divergence downstream folds under them
        _fold_downstream(info, found)
    out = []
    for per_mode in found.values():
        hazard = per_mode[0][0]
        for other, _mode in per_mode[1:]:
            if not _stands_alone(hazard) and _stands_alone(other):
                # another mode explains the same hazard completely: cite that explanation
                hazard = other
        # an operand is uniform only if it is in every mode the hazard occurs in
        hazard.operands_divergent = tuple(any(column) for column in
                                          zip(*(other.operands_divergent for other, _mode in per_mode)))
        modes = [mode for _hazard, mode in per_mode]
        if frozenset() in modes or not info.knowledge.modes:
            hazard.modes = ()
        else:
            hazard.modes = tuple(sorted(frozenset.intersection(*modes)))
        out.append((hazard, modes[0]))
    out.sort(key=lambda found: (found[0].path, found[0].site.span.line, found[0].site.span.column))
    return report_at_callers(info, out)


def _decided_by_callers(info: UniformityInfo, found: dict) -> set:
    """The sites of ``found`` that a case parameter decides and whose
    conditions every calling context that runs them agrees on, in every
    mode they are hazards in (:func:`cslint.analysis.contexts.decided_by_callers`).
    They are no hazards; until :func:`_leave_out_decided` they still mark
    where the ranks part for the conditions downstream of theirs."""
    program = info.program
    callers = None
    out = set()
    for key, per_mode in found.items():
        if per_mode[0][0].site.when is None:
            continue
        if callers is None:
            callers = callers_of(program)
        fn = program.funcs.get(per_mode[0][0].function_key)
        if fn is not None and all(
                decided_by_callers(program, fn, hazard.site, info.knowledge.world.span(hazard.group), mode, callers,
                                   SAME_LENGTH_KINDS if hazard.kind == "loop" else frozenset())
                for hazard, mode in per_mode):
            out.add(key)
    return out


def _leave_out_decided(found: dict, decided: set) -> None:
    """Drop the ``decided`` sites from ``found``.  Their conditions still
    part the ranks in the contexts where they differ, so the hazards that
    read that divergence downstream keep one root cause: the first of them
    (in path and line order; a hazard reported itself first) is reported,
    the others are listed on it (``Hazard.upstream`` names it, with the line
    where the ranks part as a sixth item), and a reported one no longer
    claims an upstream finding."""
    anchors = {(hazard.path, hazard.cond.guard.line, hazard.site.span.line): hazard
               for key in decided for hazard, _mode in found.pop(key)}
    readers: dict = {}
    for key, per_mode in found.items():
        for hazard, _mode in per_mode:
            upstream = hazard.upstream
            if upstream is not None and (upstream[3], upstream[1], upstream[2]) in anchors:
                readers.setdefault((upstream[3], upstream[1], upstream[2]), {}).setdefault(key, None)
    for anchor, keys in readers.items():
        ordered = sorted(keys, key=lambda key: (key[0], key[1], key[2]))
        reported = [key for key in ordered if not found[key][0][0].downstream_only]
        lead_key = reported[0] if reported else ordered[0]
        lead = found[lead_key][0][0]
        for key in ordered:
            for hazard, _mode in found[key]:
                if key == lead_key or not hazard.downstream_only:
                    hazard.upstream, hazard.downstream_only = None, False
                else:
                    text, _line, _site, _path, past_exit = hazard.upstream[:5]
                    hazard.upstream = (text, lead.cond.guard.line, lead.site.span.line, lead.path, past_exit,
                                       anchor[1])


def _stands_alone(hazard: Hazard) -> bool:
    """Whether the explanation of ``hazard`` holds by itself: its flow is
    not cut, and it does not read a divergence reported upstream."""
    return not hazard.flow_cut and hazard.upstream is None


def _mark_reported_upstream(info: UniformityInfo, hazards: list) -> None:
    """Set ``upstream`` on the hazards whose flow goes through a field
    written in the body of another hazard's condition: the field is set
    where the ranks already part, which that hazard reports, and this
    condition reads the divergence downstream.  Only a condition whose own
    explanation raises no strong doubt counts as reported."""
    guards: dict = {}
    for hazard in hazards:
        if not _in_doubt(hazard):
            guards.setdefault(hazard.path, {})[id(hazard.cond)] = (
                _parted(hazard.cond), _parted(hazard.cond, past_exit=False), hazard.cond.guard.line,
                hazard.site.span.line)
    links = info.program.link_functions

    def upstream(hazard, places):
        for _link, text, where in _field_writes(hazard.flow or hazard.via, links):
            found = next(((text, guard_line, site_line, path, not _inside(line, regions[:1]))
                          for path, line, called in places(where)
                          for cond, (regions, arms, guard_line, site_line) in guards.get(path, {}).items()
                          if cond != id(hazard.cond) and _inside(line, arms if called else regions)), None)
            if found is not None:
                return found
        return None

    pending = []
    for hazard in hazards:
        hazard.upstream = upstream(hazard, lambda where: where[:1])  # the field written there itself
        if hazard.upstream is None:
            pending.append(hazard)
    if not pending:
        return
    by_place: dict = {}
    for hazard in hazards:
        by_place.setdefault((hazard.path, hazard.cond.guard.line, hazard.site.span.line), []).append(hazard)
    for hazard in pending:
        # written by a callee whose call there brought the flow in; not where the ranks part
        # only downstream of this hazard in turn (two hazards reading each other's fields)
        found = upstream(hazard, lambda where: where[1:])
        if found is not None and not _leads_back(by_place, (found[3], found[1], found[2]), hazard):
            hazard.upstream = found


def _leads_back(by_place: dict, place: tuple, hazard) -> bool:
    """Whether the hazards at ``place`` (path, guard line, site line) read, by
    their upstream references, a divergence downstream of ``hazard``."""
    own = (hazard.path, hazard.cond.guard.line, hazard.site.span.line)
    seen = set()
    while place not in seen:
        if place == own:
            return True
        seen.add(place)
        upstream = next((other.upstream for other in by_place.get(place, ()) if other.upstream is not None), None)
        if upstream is None:
            return False
        place = (upstream[3], upstream[1], upstream[2])
    return False


def _field_writes(via: tuple, links: dict):
    """``(link, field, places)`` for each field write on the flow ``via``:
    the places (path, line, whether a call) it is made at, where ranks may
    already have parted -- the write itself, and the calls whose running only
    on some ranks brought the flow into the function writing it
    (``self._start()`` in the body of a rank-local ``if``, setting
    ``self.pending`` in ``_start``: the field is set on the ranks that took
    the arm, as if the arm set it).  A call counts inside a condition's body
    or arm only, not past its early exit (:func:`_parted` ``past_exit``)."""
    calls = []
    for link in via:
        kind, _keys, text = links.get(link, ("", (), ""))
        if kind == "reach":
            calls.append((link[0], link[1], True))
            continue
        if kind == "field":
            yield link, text, ((link[0], link[1], False), *calls)
        calls = []


def _parted(cond, past_exit: bool = True) -> tuple:
    """Where the ranks have parted by ``cond``: the line ranges ``(after,
    last)`` (lines ``after < line <= last``) only the ranks on one side of
    it run -- the body of a branch (its statement's lines past the first), and
    for an early exit of an ``if`` the statements a rank taking the exit skips
    (:attr:`Cond.skipped_lines`; left out without ``past_exit``): a field
    written there is set on the ranks that stayed only."""
    guard = cond.guard
    regions = ((guard.line, guard.end_line),)
    if cond.arm_lines:
        regions = regions + tuple((first - 1, last) for first, last in cond.arm_lines)
    if cond.skipped_lines and past_exit:
        regions = regions + tuple((first - 1, last) for first, last in cond.skipped_lines)
    return regions


def _inside(line: int, regions: tuple) -> bool:
    return any(after < line <= last for after, last in regions)


def _fold_downstream(info: UniformityInfo, found: dict) -> None:
    """Mark ``downstream_only`` the hazards of ``found`` (a site -> its
    ``[(hazard, mode)]``) whose condition differs only through fields written
    where another hazard's condition has parted the ranks (inside its body,
    or past its early exit: :func:`_parted`), a hazard that is reported itself
    (one not read downstream, see :func:`_mark_reported_upstream`): every
    flow that makes the condition differ passes a field set where the ranks
    already part, so the hazard reads that divergence downstream and the
    guard where it starts is the root cause, reported once.  A condition
    that also differs through a flow of its own (a source whose flow passes
    no such field) is not marked, and so is one whose list of flows the cap
    on explanations may have cut (:meth:`UniformityInfo.sources_complete`):
    the flow it dropped may be such a flow of its own.  A site is marked
    when it is in every mode it is a hazard in."""
    guards: dict = {}
    for per_mode in found.values():
        for hazard, _mode in per_mode:
            if hazard.upstream is None and not _in_doubt(hazard):
                guards.setdefault(hazard.path, []).append((_parted(hazard.cond), _parted(hazard.cond, False),
                                                           id(hazard.cond)))
    if not guards:
        return
    links = info.program.link_functions
    program = info.program

    def upstream_flow(via, own) -> bool:
        return any(cond != own and _inside(line, arms if called else regions)
                   for _link, _text, where in _field_writes(via, links) for path, line, called in where
                   for regions, arms, cond in guards.get(path, ()))

    def downstream(hazard, mode) -> bool:
        fn = program.funcs.get(hazard.function_key) if hazard.upstream is not None else None
        if fn is None:
            return False
        single = program.single_rank_dims.get(fn.key, frozenset())
        span = info.knowledge.world.span(hazard.group) - single
        ignore = SAME_LENGTH_KINDS if hazard.cond.kind == "loop" else frozenset()
        own = id(hazard.cond)
        if not info.sources_complete(hazard.cond, fn, mode):
            return False  # a flow the cap dropped may pass no parted field
        return not any(found_.dims & span and found_.source.kind not in ignore
                       and not apart_from(found_.source, single)
                       and not upstream_flow(found_.via, own)
                       for found_ in info.sources(hazard.cond, fn, mode))

    for per_mode in found.values():
        if all(downstream(hazard, mode) for hazard, mode in per_mode):
            for hazard, _mode in per_mode:
                hazard.downstream_only = True


def _in_doubt(hazard: Hazard) -> bool:
    """Whether the flow that explains ``hazard`` raises a strong doubt (see
    :meth:`cslint.rules.base.Rule.doubts`): a call on it may have agreed the
    value, it enters an object through its constructor, the pass dropped
    links of it (an explanation that shows only its first links is no doubt
    here: the pass read the rest), or it comes from another event loop."""
    agreed = bool(hazard.agreed) and not hazard.agreed[0].stored
    cut = links_dropped(hazard.flow) if hazard.flow else hazard.flow_cut
    return agreed or hazard.constructed or cut or hazard.other_loop is not None


def _site_hazard(info: UniformityInfo, fn, variant, site, reached: list, mode) -> Optional[Hazard]:
    groups = frozenset(r.group for r in reached)
    for cond in site.conds:
        if not cond.atoms or info.same_collectives_either_way(cond, variant, mode, groups) \
                or info.matching_roles(cond, variant, reached, mode) or _neighbours_meet(variant, site, cond) \
                or cond.guard in site.agreed_structure:
            continue  # every rank issues the same collectives, whichever way it goes
        if cond.going_on_sites is not None and not any(
                info.collectives_reached(variant.sites[i], mode, caller=fn) for i in cond.going_on_sites):
            continue  # every rank runs the arm once, on the pass it leaves, and nothing else
        ignore = SAME_LENGTH_KINDS if cond.kind == "loop" else frozenset()  # the elements differ, not their number
        for name, group, api, chain, direct, facts in reached:
            why = info.divergence(cond, fn, group, mode, ignore_kinds=ignore)
            if why is None or _first_rank_decides(info, fn, cond, group, mode) \
                    or _roles_agree(info, fn, variant, cond, group, mode, groups) \
                    or retried_in_step(info, variant, cond, group, mode) \
                    or announced(info, fn, variant, site, cond, group, groups, mode):
                continue
            region = len(cond.body_sites) + len(cond.else_sites) if cond.kind == "branch" else 0
            if not direct and facts is not None and (not facts.receiver or (
                    facts.receiver.startswith("self.") and not own_field(facts.receiver))):
                # a collective reached through another object is agreed on best
                # through the communicator the caller's class itself uses for
                # that API (``self.dist``, rather than ``self.transceiver._dist``)
                own = info.class_receiver(fn, api)
                if own:
                    facts = facts._replace(receiver=own)
            flow = info.flow_facts(why, group, mode, function=fn)
            others = _other_exits(info, fn, variant, site, cond, group, reached, mode) \
                if cond.kind == "early-exit" else ()
            return Hazard(cond.kind, fn.path, fn.qualname, site, cond, name, group, api, chain,
                          why.source, why.dims, shown_links(why.via), (), max(region, 1), direct, facts,
                          agreed=info.agreed_by_calls(cond, fn, group, mode) + flow.agreed,
                          constructed=flow.constructed, flow_cut=flow.cut, flow=why.via, other_loop=flow.other_loop,
                          conditional_reach=not direct and info.reach_is_conditional(chain, mode),
                          reached_groups=tuple(sorted({r.group for r in reached})),
                          operands_divergent=info.operands_divergent(cond, fn, group, mode),
                          carrier=_carrier(info, fn, cond, reached, mode), other_exits=others)
    return None


def _neighbours_meet(variant, site, cond) -> bool:
    """Whether ``cond`` only lets ``site``, an exchange over the pair of this
    stage and its neighbour, run where that neighbour is there, and the
    function also makes the other half of such exchanges: for a send to the
    stage after, a receive from the stage before under the test that it is
    there (``neighbours.py``).  Of each pair group {s, s + 1}, stage s then
    enters by the one and stage s + 1 by the other, each exactly where the
    pair is there, so the test parts no member of the pair's group."""
    mine = site.neighbour
    if mine is None or cond.kind != "branch" or cond.guard != mine.guard:
        return False
    return any(other.neighbour is not None and other.neighbour.direction != mine.direction
               and other.neighbour.side != mine.side for other in variant.sites)


def _roles_agree(info: UniformityInfo, fn, variant, cond, group: str, mode, groups: frozenset) -> bool:
    """Whether the decision of equality tests ``cond`` belongs to issues the
    same collectives over ``groups`` on every rank of ``group``, whatever
    role this rank's own values give it (``roles.py``)."""
    if cond.equality_tree is None:
        return False
    tree, constants, operands = cond.equality_tree
    program = info.program
    single = program.single_rank_dims.get(fn.key, frozenset())
    span = info.knowledge.world.span(group) - single
    divergent = []
    for atoms in operands:
        value = program.concrete(program.eval(atoms, mode), fn, mode) if atoms else {}
        divergent.append(any(origin.tag == "S" and origin.whole not in DECIDES_NO_TEST and dims & span
                             and not apart_from(origin, single)
                             for origin, (dims, _via) in value.items()))
    # a test that differs for another reason than its operands (none of which differs) is no role's
    if not (any(divergent) and roles_agree(tree, constants, tuple(divergent),
                                           lambda path: info.sequence(variant, path, mode, groups))):
        return False
    # the roles issue the same collectives: through the same communicators too, or some wait where others never go
    return not any(info.routes_part(variant, ways, mode, groups)
                   for ways in role_ways(tree, constants, tuple(divergent)))


def _first_rank_decides(info: UniformityInfo, fn, cond, group: str, mode) -> bool:
    """Whether an ``or`` test is the same over every ``group`` because the
    operands that differ over it hold on world rank 0 alone (``rank == 0``)
    and another operand, which the group agrees on, holds on world rank 0
    wherever the group has several ranks (``is_first_pp_rank and tp_size >
    1``): a group without world rank 0 decides by the agreed operand alone,
    and in the group with it that operand holds already, on every member."""
    facts = cond.first_rank
    if cond.operator != "or" or not facts:
        return False
    world = info.knowledge.world
    span = world.span(group)
    held = False
    for fact, differs in zip(facts, info.operands_divergent(cond, fn, group, mode)):
        if differs:
            if fact != FIRST_RANK_ROOT:
                return False
        elif isinstance(fact, frozenset) and all(span <= world.closure(frozenset({dim})) for dim in fact):
            held = True  # where one of those groups has one rank, so has ``group``
    return held


def _other_exits(info: UniformityInfo, fn, variant, site, cond, group: str, reached: list, mode) -> tuple:
    """The other ``if`` exits of ``cond``'s kind (``return``, ``break``...)
    that also skip the site on some ranks of ``group``."""
    word = cond.exit_text.split(" ", 1)[0]
    out = []
    for other in site.conds:
        if other is cond or other.kind != "early-exit" or other.statement != "if" or not other.atoms \
                or other.exit_text.split(" ", 1)[0] != word:
            continue
        if info.same_collectives_either_way(other, variant, mode) or info.matching_roles(other, variant, reached, mode):
            continue
        if info.divergence(other, fn, group, mode) is None:
            continue
        out.append((other, info.operands_divergent(other, fn, group, mode)))
    return tuple(out)


def _result_deciders(info: UniformityInfo) -> tuple:
    """Keys of the functions whose result a condition that decides a
    collective tests: ``(those whose missing result makes a caller leave
    its event loop -- some exit that leaves a ``while True`` tests, for
    presence, a value that is the result of calling the function --, all
    of them)``."""
    resolve = info.program.resolver.resolve
    seen: set = set()
    loop_deciders: set = set()
    deciders: set = set()
    for _fn, _mode, variant in info.functions():
        for site in variant.sites:
            for cond in site.conds:
                if id(cond) in seen:
                    continue
                seen.add(id(cond))
                keys = [target.key for atom in calls_read(cond.atoms) for target in resolve(atom.ref)]
                deciders.update(keys)
                if cond.kind == "early-exit" and cond.leaves_unbounded_loop and cond.presence is not None:
                    loop_deciders.update(keys)
    return frozenset(loop_deciders), frozenset(deciders)


def _returns_nothing(cond) -> bool:
    """Whether an early exit is a ``return`` of nothing: no value, ``None``,
    or a tuple of ``None`` (the shape a caller unpacks and tests)."""
    if cond.kind != "early-exit" or not cond.exit_text.startswith("return"):
        return False
    value = cond.exit_text[len("return"):].strip().strip("()")
    return all(part.strip() in ("", "None") for part in value.split(","))


def _returns_value(cond) -> bool:
    """Whether an early exit is a ``return`` of a value (not of nothing)."""
    return cond.kind == "early-exit" and cond.exit_text.startswith("return") and not _returns_nothing(cond)


def _carrier(info: UniformityInfo, fn, cond, reached: list, mode):
    """A broadcast that already carries an object to every rank of a group
    covering all the site reaches, for branch and exit conditions."""
    if cond.kind not in ("branch", "early-exit"):
        return None
    groups = {r.group for r in reached}
    if not groups:
        return None
    span = info.knowledge.world.span
    widest = max(groups, key=lambda g: (len(span(g)), g))
    if any(not span(widest) >= span(g) for g in groups):
        return None
    return info.schedule_carrier(fn, widest, mode)
