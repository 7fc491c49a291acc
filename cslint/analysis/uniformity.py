"""The whole-tree analysis as a query object.

In the style of LLVM's ``UniformityInfo``: the analysis computes once what
may differ between ranks and what every rank shares; its clients ask about
the conditions and call sites they care about and decide what a divergence
means for them (a rule reports it, a codemod rewrites around it)::

    info = UniformityInfo.compute(files, knowledge)
    for function, mode, variant in info.functions():
        for site in variant.sites:
            for reached in info.collectives_reached(site, mode, caller=function):
                for condition in site.conds:
                    why = info.divergence(condition, function, reached.group, mode)

A condition is *divergent over a group* when some rank-local source reaches
it along a dimension the group spans (a data-parallel rank id does not
matter to a collective over the tensor-parallel group).
"""

from __future__ import annotations

from typing import NamedTuple, Optional

from ..presets import KIND_ITERATION_ORDER, Knowledge
from .alternatives import LoopToken
from .carriers import BroadcastCarriers
from .atoms import DECIDES_NO_TEST, EMPTY, Source, calls_read
from .processes import apart_from
from .issuingroutes import routes_part, site_routes
from .divergence import MAX_SOURCES, fewest_links_first, is_cut, shown_links
from .program import Program, bound_group, call_offset, call_reaches, seen_from
from .records import Cond, FuncFacts, Site
from .resolution import issued_collective


class Reached(NamedTuple):
    """A collective a call site issues (``direct``) or reaches through the
    functions it calls (``chain``: ``(path, line, note)`` links down to it)."""

    name: str
    group: str
    api: str
    chain: tuple
    direct: bool
    #: the collective's fix facts (:class:`~cslint.analysis.callfacts.CallFacts`)
    #: as the calling function names them
    facts: Optional[tuple] = None


class Divergence(NamedTuple):
    """Why a value may differ between ranks: a rank-local source, the
    dimensions along which it still differs there, and the flow links from
    the source to the value (``(path, line, note)``)."""

    source: Source
    dims: frozenset
    via: tuple


class AgreedValue(NamedTuple):
    """A call on a finding's flow that reaches a collective over a group
    covering the finding's group: the value the condition reads may have
    come out of that collective, already agreed.  ``stored``: the value was
    then kept in a field and read by a later call (it is agreed only as long
    as every rank stores it at the same point)."""

    path: str
    line: int
    call: str  # the call's text, ``self.f()``
    collective: str
    group: str
    stored: bool


class FlowFacts(NamedTuple):
    """What a divergence's flow went through, for the rules' confidence."""

    agreed: tuple  # AgreedValue, ...
    #: the flow enters an object through its constructor (an argument of
    #: ``__init__``, a field ``__init__`` assigns): every later read of the
    #: object looks rank-local, its structure included
    constructed: bool
    #: the flow has more links than an explanation keeps (MAX_VIA): the
    #: links that decide it are not among those shown
    cut: bool = False
    #: the flow went through a field that only other event loops write
    #: (``(field text, writer qualname)``), read in an event loop of its own:
    #: an executor runs one of its loops, picked by configuration, so the
    #: writer's divergence may never meet this reader; None otherwise
    other_loop: Optional[tuple] = None


def _explained_sources(program: Program, condition: Cond, function: FuncFacts, mode: frozenset) -> tuple:
    """``([Divergence], complete)`` for ``condition``: its explanations, the
    shortest flow first, and whether they may be taken to be every flow.  A
    map drops a new explanation only once it holds
    :data:`~cslint.analysis.divergence.MAX_SOURCES` of them (its dimensions
    stay exact, its list of flows does not), so a map of the condition
    holding that many may have lost, here or in a value it was built from, a
    flow none of the kept ones stands for.  (A value cut upstream and
    narrowed since, by a collective removing dimensions, can hold fewer and
    still have lost one: the sign is the map's own size.)  A conclusion about
    *every* flow (a hazard read only downstream) is drawn only from a
    complete list."""
    if not condition.atoms:
        return [], True
    value = program.concrete(program.eval(condition.atoms, mode), function, mode)
    found = [Divergence(origin, dims, via) for origin, (dims, via) in sorted(value.items(), key=fewest_links_first)
             if origin.tag == "S" and origin.whole not in DECIDES_NO_TEST]  # what a value only holds decides nothing
    return found, len(value) < MAX_SOURCES


class UniformityInfo(BroadcastCarriers):
    """Answers about a solved :class:`~cslint.analysis.program.Program`."""

    def __init__(self, program: Program):
        self.program = program
        self.knowledge: Knowledge = program.knowledge
        #: the mode assignments the analysis distinguishes (one, empty, without modes)
        self.modes: list = program.modes
        self._sources: dict = {}  # (id(condition), function key, mode) -> (condition, [Divergence], complete)
        self._receivers: Optional[dict] = None
        self._sites_at: Optional[dict] = None
        self._conds_at: Optional[dict] = None
        self._members_of: Optional[dict] = None  # (family, path) -> [FuncFacts] by key
        #: (id(site), mode) -> (site, the (name, group) of what it reaches): the
        #: sequences of the arms of every decision ask again about the same sites
        self._reached_names: dict = {}
        #: the routes of sites and functions (:mod:`~cslint.analysis.issuingroutes`), asked only of arms
        #: that issue the same collectives
        self._routes: dict = {}
        self._variant_functions: Optional[dict] = None  # id(variant) -> its deep function

    @classmethod
    def compute(cls, files: list, knowledge: Knowledge) -> "UniformityInfo":
        """Solve the facts of a tree (``[FileFacts]``, in path order)."""
        program = Program(files, knowledge)
        program.solve()
        return cls(program)

    # -- what there is to ask about ---------------------------------------------------
    def functions(self):
        """``(function, mode, variant)`` for every function analysed in depth
        (:func:`deep_functions`: the only sites with conditions) and mode."""
        program = self.program
        for fn in deep_functions(program):
            for mode in self.modes:
                variant = program.variant(fn, mode)
                if variant is not None:
                    yield fn, mode, variant

    # -- call sites ------------------------------------------------------------------------
    def collectives_reached(self, site: Site, mode: frozenset = frozenset(),
                            caller: Optional[FuncFacts] = None) -> list:
        """Every collective a call site issues or reaches ([:class:`Reached`]);
        with ``caller``, their fix facts as the calling function names them."""
        program = self.program
        out = []
        if issued_collective(program.resolver, site) is not None:
            name, group, api = program.issued(site)
            out.append(Reached(name, group, api, (), True, site.fix))
        if site.ref is not None:
            for target in program.resolver.resolve(site.ref):
                reach = program.reach.get((target.key, mode))
                if not reach:  # most calls reach no collective
                    continue
                offset = call_offset(site, target)
                for (name, group), (api, chain, facts) in sorted(reach.items(), key=lambda item: item[0]):
                    if not call_reaches(program, site, target, mode, (name, group)):
                        continue  # what the call passes rules out every path to it
                    group = bound_group(site, target, offset, group, program)
                    link = (target.path, target.line, f"`{target.qualname}` issues a collective")
                    seen = seen_from(facts, site, target, caller) if caller is not None else None
                    out.append(Reached(name, group, api, (link,) + chain, False, seen))
        return out

    def same_collectives_either_way(self, condition: Cond, variant, mode: frozenset = frozenset(),
                                    groups: Optional[frozenset] = None) -> bool:
        """Whether every path through a two-sided decision (both arms of an
        ``if``, a ternary) issues the same non-empty sequence of collectives
        over ``groups`` (every group when None; a group that may be one of
        them counts): then every rank of those groups stays in step whichever
        way it goes.  What the arms issue over other groups is asked at those
        collectives' own sites."""
        if not (condition.two_sided and condition.alternatives):
            return False
        sequences = {self.sequence(variant, alternative, mode, groups) for alternative in condition.alternatives}
        return len(sequences) == 1 and bool(next(iter(sequences))) \
            and not self.routes_part(variant, [(alternative,) for alternative in condition.alternatives], mode, groups)

    def matching_roles(self, condition: Cond, variant, reached: list, mode: frozenset = frozenset()) -> bool:
        """Whether every arm of the ``if``/``elif`` chain ``condition``
        belongs to can issue the same collective sequences over the groups
        of ``reached``: a sender arm and a receiver arm of the same
        broadcasts, each choosing among its own paths.  A path that issues
        none of them counts as one of the arm's sequences: a sender that
        returns, raises or skips its broadcast under a test of its own meets
        no receiver that always waits in it, whatever the ranks agree on
        (the receivers never ask that test).  A chain without ``else`` has an empty
        arm, which matches none: its ranks (a group's bystanders in a loop
        over its source ranks) skip, unless the chain hands out the members
        of every group of ``reached`` by role (``roles.groups_handed_out``)."""
        if condition.role_arms is None:
            return False
        arms, open_else, explicit, split, handed_out = condition.role_arms
        groups = frozenset(r.group for r in reached)
        if open_else:  # the chain's own arms alone (its own two sides would leave the open end out)
            return bool(handed_out) and groups <= handed_out and self._arms_match(variant, arms, groups, mode)
        # explicit None: a rest of the block known only by the sites it may issue, for _arm_joins alone
        if explicit is not None and self._arms_match(variant, arms, groups, mode):
            return True
        # its own two sides, its arm and the later arms (an else holding only an if may be one role's code)
        return (split is not None and self._arms_match(variant, split, groups, mode)) \
            or (not explicit and len(arms) == 2 and _arm_joins(self, variant, arms, reached, groups, mode))

    def _arms_match(self, variant, arms, groups: frozenset, mode: frozenset) -> bool:
        first = None
        for arm in arms:
            # Every path counts, those that issue nothing over these groups
            # too: a test of one arm alone decides nothing for the ranks of
            # another, so agreed or not it may leave them waiting.
            issued = frozenset(self.sequence(variant, sequence, mode, groups) for sequence in arm)
            if first is None:
                if not any(issued):
                    return False
                first = issued
            elif issued != first:
                return False
        return not self.routes_part(variant, arms, mode, groups)

    def routes_part(self, variant, arms, mode: frozenset, groups: Optional[frozenset],
                    wanted: Optional[set] = None) -> bool:
        """Whether arms (each a collection of site sequences) that issue the
        same collectives over ``groups`` ask different communicators for one
        of them (of ``wanted``, (operation, group) pairs, where given): the
        ranks taking one arm wait in a communicator the others never enter
        (:mod:`~cslint.analysis.issuingroutes`; an unknown route matches)."""
        caller = self._function_of(variant)
        operation = self.knowledge.operation
        tables = []
        for arm in arms:
            table: dict = {}
            for indices in arm:
                for name, group, route in self._routes_of(variant, indices, caller, mode):
                    key = (operation(name), group)
                    if (groups is None or any(may_be_one_group(group, g) for g in groups)) \
                            and (wanted is None or key in wanted):
                        table.setdefault(key, set()).add(route)
            tables.append(table)
        return routes_part(tables)

    def _routes_of(self, variant, indices, caller, mode):
        """``(name, group, route)`` of what the sites of a sequence issue, those of its loops' bodies included."""
        sites, count = variant.sites, len(variant.sites)
        for index in indices:
            if type(index) is LoopToken:
                for body in index.bodies:
                    yield from self._routes_of(variant, body, caller, mode)
            elif index < count:
                yield from site_routes(self.program, sites[index], caller, mode, self._routes)

    def _function_of(self, variant) -> Optional[FuncFacts]:
        """The deep function ``variant`` is a variant of (None if none is)."""
        if self._variant_functions is None:
            self._variant_functions = {id(v): fn for fn in deep_functions(self.program) for v in fn.variants.values()}
        return self._variant_functions.get(id(variant))

    def sequence(self, variant, indices, mode, groups: Optional[frozenset] = None) -> tuple:
        """The collectives (operation, group) a sequence of sites issues over
        ``groups`` (every group when None; :func:`_names_reached`); a loop
        (:class:`~cslint.analysis.alternatives.LoopToken`) is one element:
        the set of what one iteration may issue."""
        sequence, sites, count = [], variant.sites, len(variant.sites)
        for index in indices:
            if type(index) is LoopToken:
                bodies = frozenset(self.sequence(variant, body, mode, groups) for body in index.bodies)
                if any(bodies):
                    sequence.append(("loop", bodies))
                continue
            if index < count:
                for name, group in _names_reached(self, sites[index], mode):
                    if groups is None or any(may_be_one_group(group, g) for g in groups):
                        sequence.append((name, group))
        return tuple(sequence)

    # -- conditions --------------------------------------------------------------------------
    def sources(self, condition: Cond, function: FuncFacts, mode: frozenset = frozenset()) -> list:
        """Every explanation of how ``condition`` may differ between ranks
        ([:class:`Divergence`]), the shortest flow first; empty when the
        condition is the same on every rank (the cap may have cut the list:
        :meth:`sources_complete`)."""
        return self._explained(condition, function, mode)[0]

    def sources_complete(self, condition: Cond, function: FuncFacts, mode: frozenset = frozenset()) -> bool:
        """Whether :meth:`sources` may be taken to list every flow by which
        ``condition`` may differ (:func:`_explained_sources`)."""
        return self._explained(condition, function, mode)[1]

    def _explained(self, condition: Cond, function: FuncFacts, mode: frozenset) -> tuple:
        key = (id(condition), function.key, mode)
        known = self._sources.get(key)
        if known is None or known[0] is not condition:
            known = self._sources[key] = (condition, *_explained_sources(self.program, condition, function, mode))
        return known[1], known[2]

    def divergence(self, condition: Cond, function: FuncFacts, group: str, mode: frozenset = frozenset(),
                   *, ignore_kinds=frozenset()) -> Optional[Divergence]:
        """Why ``condition`` (in ``function``) may differ over ``group``: the best-explained source along a dimension
        the group spans (less Program.single_rank_dims, those of a group of one rank where ``function`` runs, whose
        several-rank writers' sources never reach it: processes.apart_from), but ``ignore_kinds``; None if uniform."""
        span = condition.span_over(self.knowledge.world, group) \
            - (single := self.program.single_rank_dims.get(function.key, EMPTY))
        order = None
        for found in self.sources(condition, function, mode):
            kind = found.source.kind
            if kind in ignore_kinds or not found.dims & span or apart_from(found.source, single):
                continue
            if kind == KIND_ITERATION_ORDER:
                # a set's order decides no test, only which element a loop's
                # iteration has; a source that changes the trip count says more
                if order is None and condition.kind == "loop":
                    order = found
                continue
            return found
        return order

    def operands_divergent(self, condition: Cond, function: FuncFacts, group: str,
                           mode: frozenset = frozenset()) -> tuple:
        """For an ``and``/``or`` test, whether each top-level operand may
        differ over ``group`` (empty for other tests)."""
        program = self.program
        span = self.knowledge.world.span(group)
        out = []
        for _span, atoms, _presence in condition.operands:
            value = program.concrete(program.eval(atoms, mode), function, mode) if atoms else {}
            out.append(any(origin.tag == "S" and origin.whole not in DECIDES_NO_TEST and dims & span
                           for origin, (dims, _via) in value.items()))
        return tuple(out)

    # -- what a flow went through -------------------------------------------------------------
    def flow_facts(self, divergence: Divergence, group: str, mode: frozenset = frozenset(),
                   function: Optional[FuncFacts] = None) -> FlowFacts:
        """The calls on ``divergence``'s flow that may have agreed the value
        over ``group`` already, whether the flow went through a constructor,
        and whether it went through a field only other event loops than
        ``function``'s write."""
        program = self.program
        span = self.knowledge.world.span(group)
        agreed = []
        constructed = False
        other_loop = None
        cut = is_cut(divergence.via)
        via = shown_links(divergence.via)
        reader_loop = function is not None and self.is_event_loop(function, mode)
        # nearest the condition first: the last call that may have agreed the value is what the condition reads
        for position in range(len(via) - 1, -1, -1):
            link = via[position]
            kind, keys, text = program.link_functions.get(link, ("", (), ""))
            if kind in ("param", "field"):
                constructed |= any(key in program.funcs and program.funcs[key].qualname.endswith("__init__")
                                   for key in keys)
                writers = [program.funcs[key] for key in keys if key in program.funcs]
                if kind == "field" and reader_loop and other_loop is None and writers \
                        and all(w is not function and self.is_event_loop(w, mode) for w in writers):
                    other_loop = (text, writers[0].qualname)
                continue
            if kind != "return":
                continue
            stored = any(program.link_functions.get(later, ("",))[0] == "field" for later in via[position + 1:])
            for key in keys:
                for (name, reached_group) in sorted(program.reach.get((key, mode), {})):
                    if self.knowledge.world.span(reached_group) >= span:
                        agreed.append(AgreedValue(link[0], link[1], text, name, reached_group, stored))
                        break
        if not agreed:
            agreed = self._agreed_at_source(divergence.source, span, mode, stored=any(
                program.link_functions.get(link, ("",))[0] == "field" for link in via))
        return FlowFacts(tuple(agreed), constructed, cut, other_loop)

    def _agreed_at_source(self, source, span: frozenset, mode: frozenset, stored: bool) -> list:
        """The calls that reach a collective over ``span`` whose results the
        test where the source is read also reads (``batch = self.f(); if
        batch is None: break``, with ``batch`` a source by its name): what
        flows from that test may be the collective's result, agreed already."""
        if self._conds_at is None:
            index: dict = {}
            for fn in deep_functions(self.program):
                for key, variant in fn.variants.items():
                    for site in variant.sites:
                        for cond in site.conds:
                            index.setdefault((fn.path, cond.line), {})[id(cond)] = (key, cond)
            self._conds_at = index
        for key, cond in self._conds_at.get((source.path, source.line), {}).values():
            if (key is None or key == mode) and cond.atoms:
                found = self._agreed_calls(cond.atoms, span, source.path, source.line, mode)
                if found:
                    return [value._replace(stored=stored) for value in found[:1]]
        return []

    def is_event_loop(self, function: FuncFacts, mode: frozenset = frozenset()) -> bool:
        """Whether ``function`` runs an event loop: some exit in it leaves a
        ``while True`` (as far as its call sites' conditions show)."""
        variant = self.program.variant(function, mode)
        if variant is None:
            return False
        return any(cond.leaves_unbounded_loop for site in variant.sites for cond in site.conds)

    def agreed_by_calls(self, condition: Cond, function: FuncFacts, group: str,
                        mode: frozenset = frozenset()) -> tuple:
        """The calls whose results the condition reads directly (``if
        self.f():``, ``x = self.f(); if x:``) that reach a collective over a
        group covering ``group``: the value may be that collective's result,
        agreed already (AgreedValue, not stored)."""
        span = self.knowledge.world.span(group)
        parts = [condition.atoms]
        if condition.operands:
            # an `and`/`or` test is agreed only if every operand that differs reads an agreed call
            differs = self.operands_divergent(condition, function, group, mode)
            parts = [atoms for (_span, atoms, _presence), d in zip(condition.operands, differs) if d] or parts
        found = []
        for atoms in parts:
            agreed = self._agreed_calls(atoms, span, function.path, condition.line, mode)
            if not agreed:
                return ()
            found.extend(agreed)
        return tuple(dict.fromkeys(found))

    def _agreed_calls(self, atoms: frozenset, span: frozenset, path: str, line: int, mode: frozenset) -> list:
        program = self.program
        found = []
        for atom in sorted(set(calls_read(atoms)), key=lambda a: (a.text, a.path, a.line, repr(tuple(a.ref)))):
            for target in program.resolver.resolve(atom.ref):
                hit = next(((name, reached) for (name, reached) in sorted(program.reach.get((target.key, mode), {}))
                            if self.knowledge.world.span(reached) >= span), None)
                if hit is not None:
                    found.append(AgreedValue(path, line, f"{atom.text}()", hit[0], hit[1], False))
                    break
        return found

    def reach_is_conditional(self, chain: tuple, mode: frozenset = frozenset()) -> bool:
        """Whether some call on a reach chain (``(path, line, note)`` links
        from a call down to its collective) sits under a condition of its own
        function in this mode: the collective is then reached on some of the
        callee's paths only, which the analysis does not relate to the
        caller's path."""
        if self._sites_at is None:
            index: dict = {}
            for fn in deep_functions(self.program):
                for key, variant in fn.variants.items():
                    for site in variant.sites:
                        index.setdefault((fn.path, site.span.line), []).append((fn, key, site))
            self._sites_at = index
        for path, line, _note in chain[1:]:
            for fn, key, site in self._sites_at.get((path, line), ()):
                if (key is None or key == mode) and site.conds:
                    return True
        return False

    # -- communicators ---------------------------------------------------------------------------
    def class_receiver(self, function: FuncFacts, api: str) -> Optional[str]:
        """The communicator field (``self.dist``) that the class of
        ``function`` (with its family) calls collectives of ``api`` on most
        often, or None."""
        program = self.program
        if self._receivers is None:
            counts: dict = {}
            for other in deep_functions(self.program):
                family = program.resolver.family(other.class_key)
                if family is None:
                    continue
                for variant in other.variants.values():
                    for site in variant.sites:
                        if site.collective is not None and site.fix is not None and own_field(site.fix.receiver):
                            per = counts.setdefault((family, site.collective.api), {})
                            per[site.fix.receiver] = per.get(site.fix.receiver, 0) + 1
            self._receivers = {key: min(per, key=lambda r: (-per[r], r)) for key, per in counts.items()}
        return self._receivers.get((program.resolver.family(function.class_key), api))


def deep_functions(program: Program) -> list:
    """The functions analysed in depth, in the program's order: the only
    ones whose call sites carry conditions, a collective or fix facts (a
    summary keeps a call for what it passes on alone:
    ``SummaryWalk._calls``), so the indexes of those read no summary."""
    return [fn for fn in program.funcs.values() if fn.deep]


def may_be_one_group(first: str, second: str) -> bool:
    """Whether two group names may stand for the same process group: the
    same name, the world, or a group known only by the expression that holds
    it (``group:self.device_group`` may be any group); two named parallel
    dimensions (``tp``, ``pp``) are different groups."""
    return first == second or "world" in (first, second) or first.startswith("group:") \
        or second.startswith("group:")


def own_field(receiver: str) -> bool:
    """``self.x``: a communicator the object holds itself."""
    return receiver.startswith("self.") and receiver.count(".") == 1


def _arm_joins(info: UniformityInfo, variant, arms, reached: list, groups: frozenset, mode: frozenset) -> bool:
    """Whether an arm that leaves the block (``if c: ...; return``, the
    rest of the block the other side) issues, on some path, every
    collective of ``reached`` that the rest of the block issues too: a
    dummy step that joins the peers' coordination before returning empty.
    Which of the arm's paths a rank takes is its own tests' question, asked
    where they guard the compensating calls, as for an arm a chain writes
    out (see :meth:`UniformityInfo._arms_match`)."""
    operation = info.knowledge.operation
    wanted = {(operation(r.name), r.group) for r in reached}
    sides = []
    for arm in arms:
        issued: set = set()
        for sequence in arm:
            _flatten_issued(info.sequence(variant, sequence, mode, groups), issued)
        sides.append(issued)
    return bool(wanted) and all(wanted <= issued for issued in sides) \
        and not info.routes_part(variant, arms, mode, groups, wanted)


def _flatten_issued(sequence: tuple, out: set) -> None:
    """Add the (name, group) collectives of a :meth:`UniformityInfo.sequence`
    to ``out``, those of its loops' bodies included."""
    for element in sequence:
        if element[0] == "loop" and isinstance(element[1], frozenset):
            for body in element[1]:
                _flatten_issued(body, out)
        else:
            out.add(element)


def _names_reached(info: UniformityInfo, site: Site, mode: frozenset) -> tuple:
    """(operation, group) of each of ``info.collectives_reached(site, mode)``,
    in order, each once, worked out once per site and mode.  What one call
    reaches is what it may issue, not a sequence: a callee choosing between
    its communicators' all-reduces over one group (two collectives of the
    tree, both bound to that group here) issues one all-reduce over it, as
    does a helper named for the operation (:meth:`Knowledge.operation`:
    ``tensor_model_parallel_all_reduce``), so an arm calling the one and an
    arm calling the other issue the same sequence; which communicators they
    ask is compared apart (:meth:`UniformityInfo.routes_part`)."""
    key = (id(site), mode)
    found = info._reached_names.get(key)
    if found is None or found[0] is not site:
        operation = info.knowledge.operation
        issued = dict.fromkeys((operation(reached.name), reached.group)
                               for reached in info.collectives_reached(site, mode))
        found = info._reached_names[key] = (site, tuple(issued))
    return found[1]
