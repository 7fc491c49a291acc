"""The whole-tree fixpoint: every function's summary resolved against the
rest of the tree.

Input: the :class:`~cslint.analysis.records.FileFacts` of every analysed
file.  The tables it solves say, per mode assignment, what each function
returns, what each field and parameter may hold, under which conditions
callers call each function, and which collectives each function reaches.
:class:`~cslint.analysis.uniformity.UniformityInfo` answers questions from
them; nothing here knows about codes, messages or output formats.

Values are evaluated to divergence maps (:mod:`cslint.analysis.divergence`).
Parameters are kept symbolic (:class:`~cslint.analysis.divergence.ParamSlot`)
inside return summaries so a wrapper's result depends on what each caller
passes; elsewhere a parameter is divergent when some call site passes a
divergent argument (context-insensitive).
"""

from __future__ import annotations

import functools
from typing import Optional

from ..presets import KIND_FILESYSTEM, KIND_RANK_ID, Knowledge, group_from_text
from ..presets.rank_names import names_node_position, rank_name_dims
from .atoms import BY_METHOD, field_name, field_read
from .callrefs import call_offset, receiver_shift  # (call_offset: read through here too)
from .callfacts import translate
from .callercontext import hands_context_to, pass_calling_context
from .constructiongroups import construction_groups, held_field_params
from .constructions import BUILT_APART, constructor_fields, stored_apart
from .presentfields import absent_written_fields
from .lackednames import LackedNames
from .rebuilds import rebuilt_objects
from .divergence import merge
from .demand import ask_ahead
from .feasibility import call_allows, case_assignments, passed_values
from .memofills import memo_covered
from .processes import asserted_single_rank, marked, runs_only_on_root, runs_only_where
from .reads import CALLEE_REFS, element_stored_fields, entry_fields
from .records import FuncFacts, Site
from .resolution import Resolver, issued_collective
from .selfcalls import SELF_REFS, MethodWrites, note_handed, note_self_call
from .stepreads import EMPTY_ATOMS, fixpoint_readers, property_readers, stepped
from .syntax import CONSTRUCTORS
from .tablevalues import UNREAD, TableValues

MAX_ROUNDS = 40
#: the most names a group's access path may have where a call binds it
#: (``self.module.pg.group``: 4); a longer one keeps the callee's own text
MAX_GROUP_PATH_NAMES = 4


#: Source kinds that count where they decide a collective directly, but do
#: not make everything a callee assigns divergent when they decide the call:
#: a script that converts a checkpoint only if the file exists constructs its
#: communicator wrapper under that test without any rank skipping anything.
DIRECT_ONLY_KINDS = frozenset({KIND_FILESYSTEM})


class Program(TableValues):
    """Solve the summaries of a tree to a fixpoint (see the module docstring)."""

    def __init__(self, files: list, knowledge: Knowledge, callee_files: tuple = (), discovered: frozenset = frozenset()):
        self.knowledge = knowledge
        #: a declared world's closure of a source's dimensions (those inside them), None without one
        self._inside_dims = knowledge.world.closure if knowledge.world.inside else None
        self.files = [f for f in files if f.error is None]
        self.modes = knowledge.mode_assignments() if knowledge.modes else [frozenset()]
        self.resolver = Resolver(self.files, discovered)  # (discovered: the run's module names, analysed or not)
        #: the functions of files read only for what they raise (see ProgramReads.raising_targets)
        callee_files = [f for f in callee_files if f.error is None]
        self.callees = Resolver(callee_files) if callee_files else None
        self.funcs = self.resolver.funcs
        self.modules = self.resolver.modules
        ask_ahead(self.resolver)  # the summaries the demand asks first, filled while the rest is built
        self.method_writes = MethodWrites(self.funcs, self.resolver.family, self.resolver)  # what a method writes through self calls
        # fixpoint tables
        self.rets: dict = {}  # (fkey, mode) -> divergence map (may hold PARAM keys)
        self.ret_parts: dict = {}  # (fkey, mode, index) -> the same, of one element of a tuple returned
        self.split_returns: set = set()  # (fkey, mode) whose ret_parts are kept: some caller reads an element
        self.fields: dict = {}  # (family, attr, mode) -> divergence map
        self.params: dict = {}  # (fkey, index, mode) -> divergence map
        self.ctx: dict = {}  # (fkey, mode) -> divergence of the conditions under which callers call it
        self.reach: dict = {}  # (fkey, mode) -> {(name, group): (api, chain, CallFacts as seen from fkey)}
        #: (fkey, mode) -> {(name, group): the case-parameter assignments under
        #: which the function reaches it}; a collective it reaches under every
        #: assignment has no entry (see analysis/feasibility.py)
        self.reach_when: dict = {}
        self.globals: dict = {}  # (module, name, mode) -> divergence map
        self.memo: dict = {}
        #: flow link -> (how the value travelled, the functions involved, what it travelled through): a
        #: "returned by `f()`" link -> ("return", the keys of what ``f`` may run, "f()"); "passed as" ->
        #: ("param", (callee,), the parameter); "assigned from it in" -> ("field", (the assigning function,),
        #: "self.attr"); "runs only on some ranks" -> ("reach", what the call may run, "f").  For the rules'
        #: confidence (UniformityInfo.flow_facts) and the downstream fold (hazards._field_writes).
        self.link_functions: dict = {}
        self._ordered: dict = {}  # atom set -> its atoms in canonical order
        #: canonical orders worked out ahead of need by another process (see :func:`~cslint.analysis.stepreads.atom_sets`):
        #: ``get(atoms)`` gives the positions :func:`~cslint.analysis.divergence.canonical_positions`
        #: finds for a set, or None; the order is a function of the set alone, so it does not
        #: matter which process worked it out
        self.orders_ahead = None
        self._digests: dict = {}  # see structure_digest
        self._projections: dict = {}  # see seen_through
        self._globals_busy: set = set()
        self.changed_keys: set = set()
        self.step_reads, self.demanded = {}, None  # see :func:`stepped`: key -> what its step reads; the functions
        self.properties = property_readers(self.resolver)
        self._passed_rank_params = self._rank_params_callers_pass()
        #: field name -> {origin: (dims, via)} of the fields signal handlers assign
        self.signal_fields: dict = {}
        #: (family, attr) of the fields an element is stored into: their own structure has a table of its own (atoms.own_field)
        self.own_fields = element_stored_fields(self.funcs.values(), self.resolver.family)
        #: tables whose entry positions are read apart (atoms.entry_field)
        self.entry_fields = entry_fields(self.funcs.values(), self.resolver.family)
        #: (family, attr) of the fields constructors store (constructions.py)
        self.built_fields = constructor_fields(self.funcs.values(), self.resolver.family)
        self.absent_fields = absent_written_fields(self.funcs.values(), self.resolver.family)  # presentfields.py
        rebuilt = rebuilt_objects(self.funcs.values(), self.resolver.family)  # (family, attr) -> objects (rebuilds.py)
        self.rebuilt_fields = frozenset(rebuilt)  # (family, attr) of the fields some method rebuilds
        self.lacked_names = LackedNames(self.files, rebuilt, self.resolver, knowledge)  # lackednames.py
        #: id(site) -> the group every construction hands the field a collective runs over, and id(site) ->
        #: {"self.<attr>": group} for a call passing such a field on (constructiongroups.py)
        self.construction_groups, self.construction_passed = construction_groups(self)
        self._seed_signal_handler_fields()
        #: function key -> the dimensions no two ranks running it differ along
        self.single_rank_dims = runs_only_where(self.funcs.values(), self.files, self.resolver,
                                                "single_rank_bindings", knowledge.world, knowledge.protocol_methods)
        asserted_single_rank(self.single_rank_dims, self.funcs.values(), knowledge.world)
        #: function key -> the dimensions of a group that has several ranks wherever it runs: the sources
        #: of what it writes out are marked so (processes.py)
        self.several_rank_dims = runs_only_where(self.funcs.values(), self.files, self.resolver,
                                                 "several_rank_bindings", knowledge.world)
        self._marking = None  # while such a function is stepped: those dimensions
        #: id(site) -> the keys of its targets that reach only module memos every constructor of the
        #: calling method's family filled: the call reaches no collective through them (memofills.py)
        self.memo_covered = memo_covered(self)

    def _rank_params_callers_pass(self) -> frozenset:
        """The rank-id sources of parameters named like a rank
        (``FuncFacts.rank_params``) of the functions some call in the tree
        reaches: what those callers pass is the parameter's value (a loop's
        source rank, a caller's destination), read through the parameter, its
        tests too (kept without ``whole``); a function no call reaches (a
        process entry point, ``mp.spawn``) keeps it as this process's rank."""
        named = {fn.key: fn.rank_params for fn in self.funcs.values() if fn.rank_params}
        if not named:
            return frozenset()
        called = self.resolver.callers()
        return frozenset(atom[:6] for key, atoms in named.items() if key in called for atom in atoms)

    @functools.cached_property
    def root_only(self) -> dict:
        """function key -> the dimensions of the groups of which it runs on one
        rank alone (:func:`~cslint.analysis.processes.runs_only_on_root`): read
        once the fixpoint is solved, as whether a field holds this rank's id
        is a question of its tables."""
        return runs_only_on_root(self.funcs.values(), self.files, self.resolver, self._rank_id_dims,
                                 self.knowledge.protocol_methods)

    def _rank_id_dims(self, fn: FuncFacts, text: str) -> frozenset:
        """The dimensions along which ``text`` (a plain dotted name) read in
        ``fn`` is this rank's id in a group: a field of ``self`` by its
        table, where every source of it is a rank's id named by no word of a
        position on one node and no store of it works on what it reads
        (``FuncFacts.derived_stores``: ``self.rank = rank // tp``); another
        name by what the presets' rank words say of it, no such word in it
        (``local_rank`` holds on one rank per node); empty elsewhere."""
        owner, _, attr = text.partition(".")
        if fn.self_offset == 1 and fn.params and owner == fn.params[0]:
            if "." in attr or not attr or (self.resolver.family(fn.class_key), attr) in self._derived_fields:
                return frozenset()
            value = self.concrete(self.eval(frozenset({field_read(fn.class_key, attr)}), frozenset()), fn, frozenset())
            origins = [(origin, dims) for origin, (dims, _via) in value.items() if origin.tag == "S"]
            if any(origin.kind != KIND_RANK_ID or names_node_position(origin.text) for origin, _dims in origins):
                return frozenset()
            return frozenset().union(*(dims for _origin, dims in origins))
        return frozenset() if names_node_position(text) else rank_name_dims(text) or frozenset()

    @functools.cached_property
    def _derived_fields(self) -> frozenset:
        """(family, attr) of the fields some method stores a value worked on into (``FuncFacts.derived_stores``)."""
        family = self.resolver.family
        return frozenset((family(fn.class_key), attr) for fn in self.funcs.values() for attr in fn.derived_stores)

    def issued(self, site: Site) -> tuple:
        """(name, group, api) of the collective ``site`` issues itself, its
        group as every construction of its object names it where one does
        (:mod:`~cslint.analysis.constructiongroups`)."""
        name, group, api = site.collective
        return name, self.construction_groups.get(id(site), group), api

    # -- fixpoint --------------------------------------------------------------------
    def solve(self) -> None:
        """Semi-naive fixpoint: a function is re-evaluated only when a table
        entry it reads (its parameters, the fields, returns and collective
        reach it refers to) changed in the previous round, after the tables
        its last step read stood as they did: a step reads what earlier steps
        of its round wrote, and maps memoised earlier in the round, so each
        step notes the earliest step whose tables it read (``_read_since``),
        and each table entry the step that last changed it.  A reader stepped
        after the change, through no map memoised before it, saw it already:
        it is stepped again only where an entry it reads changed earlier in
        this round (as it was before), and otherwise the maps its last step
        used go back into the round's memo, where the later steps find them
        as its step would have left them."""
        funcs = stepped(self)
        # table entry -> the positions of the functions that read it; the
        # first round steps every function, so they are needed from the
        # second round on (and worked out ahead by the helper, if one runs)
        readers: Optional[dict] = None
        read_since = [0] * len(funcs)  # position -> the earliest step whose tables its last step read
        changed_in: dict = {}  # table entry -> the step that last changed it
        touched: list = [None] * len(funcs)  # position -> the memoised maps and globals its last step used
        changed = self.changed_keys = set()
        step_reads = self.step_reads
        dirty = None
        tick = 0
        for _round in range(MAX_ROUNDS):
            self.memo = {}
            self._projections = {}
            self.globals = {}
            rerun = None
            if dirty is None:
                due = range(len(funcs))
            else:  # the readers of what changed, in the order of the first round
                readers = readers or fixpoint_readers(self, funcs)
                positions, rerun = set(), set()
                for key in dirty:
                    since = changed_in[key]
                    for position in readers.get(key, ()):
                        positions.add(position)
                        if read_since[position] <= since:
                            rerun.add(position)
                due = sorted(positions)
            ahead = self.orders_ahead if dirty is None else None
            round_changed: set = set()
            memo, known_globals = self.memo, self.globals
            for position in due:
                if rerun is not None and position not in rerun:
                    reads = step_reads.get(funcs[position].key)
                    if reads is None or not reads.isdisjoint(round_changed):
                        rerun.add(position)  # what it reads changed earlier in this round
                if rerun is not None and position not in rerun:
                    # what it read stands as it did: the maps its step would make are
                    # those it made then, which later steps of the round may use
                    for key, made in touched[position][0].items():
                        if key not in memo:
                            memo[key] = made
                    for key, made in touched[position][1].items():
                        if key not in known_globals:
                            known_globals[key] = made
                    continue
                fn = funcs[position]
                if ahead is not None:
                    ahead.stepping(position)
                tick += 1
                self._step_tick = self._read_since = tick
                self._read_marked = False
                touched[position] = self._touched, self._touched_globals = {}, {}
                for mode in self.modes:
                    v = self.variant(fn, mode)
                    if v is None:
                        continue
                    self._step(fn, v, mode)
                # a step that used a map made under another function's marking (or marks itself) is
                # stepped again whenever it is due: its maps are not those it would make now
                read_since[position] = 0 if self._read_marked or fn.key in self.several_rank_dims \
                    else self._read_since
                if changed:
                    for key in changed:
                        changed_in[key] = tick
                    round_changed |= changed
                    changed = self.changed_keys = set()
            self._read_since = UNREAD
            self._touched = self._touched_globals = None
            if not round_changed:
                break
            dirty = round_changed
        self.changed_keys = round_changed

    def _step(self, fn: FuncFacts, v, mode: frozenset) -> bool:
        self._marking = self.several_rank_dims.get(fn.key)
        try:
            return self._step_marked(fn, v, mode)
        finally:
            self._marking = None

    def _step_marked(self, fn: FuncFacts, v, mode: frozenset) -> bool:
        changed = self._record_returns(fn, v, mode)
        calling_ctx = self.ctx.get((fn.key, mode), {})
        # A constructor called on some ranks only makes an object that only
        # those ranks hold: whoever holds it got the calling context already
        # (the implicit flow of the assignment), its own fields do not, nor
        # do those the methods it calls on ``self`` set (callercontext.py).
        constructor = fn.qualname.rsplit(".", 1)[-1] in CONSTRUCTORS
        field_ctx = {} if constructor else calling_ctx
        for write in v.fields:
            class_key, attr, atoms, line, element, absent, rebuilt = write
            write_ctx = {} if attr in fn.restored_fields else field_ctx  # put back past the caller's ``with``
            if not atoms and not write_ctx:
                continue
            own = self.eval(atoms, mode) if atoms else {}
            value = dict(self.concrete(own, fn, mode))
            family = self.resolver.family(class_key)
            own_value = dict(value)  # without the callers' conditions: the by-method tables (selfcalls.py)
            if write_ctx:
                # A value that is the result of collectives this function issues (or
                # is decided by calls that issue them) is written by every rank of
                # their groups alike: a rank that did not run the function skipped the
                # collective too, a hazard of its own at the call.  So the calling
                # conditions only count along the dimensions those groups do not span
                # (the field's own earlier value, read by the test guarding the write, adds no rank).
                synced = self._collective_span(frozenset(a for a in atoms if not any(
                    f.tag == "F" and f.attr == attr and self.resolver.family(f.class_key) == family
                    for f in (a.inner if a.tag == "J" else (a,)))), mode)
                for k, (dims, via) in write_ctx.items():
                    rest = self.knowledge.world.residual(dims, synced)
                    if rest and k not in value:
                        value[k] = (rest, via)
            if not value and not own_value:
                continue
            apart = stored_apart(fn, write, own, self.resolver.family)  # constructions.py
            if apart and self._marking is not None:
                apart = marked(apart, self._marking)
            named = field_name(attr)
            link = (fn.path, line, f"`self.{named}` is assigned from it in `{fn.qualname}`")
            self.link_functions[link] = ("field", (fn.key,), f"self.{named}")
            for written in self._written_tables(family, attr, element, fn, absent, rebuilt):
                table = self.fields.setdefault((family, written, mode), {})
                for k, (dims, via) in (own_value if BY_METHOD in written else value if apart is None
                                       or not written.endswith(BUILT_APART) else apart).items():
                    if merge(table, k, dims, via, link):
                        changed = True
                        self.changed_keys.add(("field", family, written))
        reach = self.reach.setdefault((fn.key, mode), {})
        reach_when = self.reach_when.setdefault((fn.key, mode), {})
        for site in v.sites:
            if issued_collective(self.resolver, site) is not None:
                name, group, api = self.issued(site)
                if _add_reach(reach, reach_when, (name, group), site.when, lambda: (
                        api, ((fn.path, site.span.line, f"`{site.callee}` is a collective over {group}"),), site.fix)):
                    changed = True
                    self.changed_keys.add(("reach", fn.key))
            if site.ref is None:
                continue
            targets = self.resolver.resolve(site.ref)
            if not targets:
                if self.callees is not None and site.ref.tag in CALLEE_REFS and self._pass_to_callee(fn, site, mode):
                    changed = True
                continue
            site_ctx = getattr(site, "ctx_atoms", EMPTY_ATOMS)
            ctx_value = dict(self.concrete(self.eval(site_ctx, mode), fn, mode)) if site_ctx else {}
            if ctx_value and site.ref.tag in SELF_REFS:
                changed = note_self_call(self, fn, site, ctx_value, mode) or changed
            if site.handed:
                changed = note_handed(self, fn, site, mode) or changed
            if fn.deep or site.args or site.kwargs or hands_context_to(fn, site.ref):
                # (a summarised constructor's call on self without arguments, kept for a test of its own,
                # hands on that test alone, as for its other calls on self: callercontext.py)
                for k, entry in calling_ctx.items():
                    ctx_value.setdefault(k, entry)
            if ctx_value:
                ctx_value = {k: e for k, e in ctx_value.items() if not (k.tag == "S" and k.kind in DIRECT_ONLY_KINDS)}
            if ctx_value:
                link = (fn.path, site.span.line, f"`{site.callee}()` runs only on some ranks in `{fn.qualname}`")
                self.link_functions[link] = ("reach", tuple(target.key for target in targets), site.callee)
                for target in targets:
                    table = self.ctx.setdefault((target.key, mode), {})
                    for k, (dims, via) in ctx_value.items():
                        if merge(table, k, dims, via, link):
                            changed = True
                            self.changed_keys.add(("ctx", target.key))
            for target in targets:
                offset = call_offset(site, target)
                if self._pass_arguments(fn, site, target, offset, mode):
                    changed = True
                # a copy: where ``target`` is ``fn`` itself (a recursive call),
                # what this loop adds goes into the table it walks
                for ckey, (api, chain, facts) in list(self.reach.get((target.key, mode), {}).items()):
                    if not call_reaches(self, site, target, mode, ckey):
                        continue
                    when = handed_cases(self, fn, site, target, offset, mode, ckey)
                    if when is not None and not when:
                        continue  # reached only where a case parameter it hands on holds what no case of fn gives
                    bound = bound_group(site, target, offset, ckey[1], self)
                    if bound != ckey[1]:
                        ckey = (ckey[0], bound)
                    if _add_reach(reach, reach_when, ckey, when, lambda: (
                            api, ((fn.path, site.span.line, f"`{site.callee}()` calls `{target.qualname}`"),) + chain[:6],
                            seen_from(facts, site, target, fn))):
                        changed = True
                        self.changed_keys.add(("reach", fn.key))
        return pass_calling_context(self, fn, v, calling_ctx, mode, DIRECT_ONLY_KINDS) or changed


def call_reaches(program: Program, site: Site, target: FuncFacts, mode: frozenset, ckey: tuple) -> bool:
    """Whether a call can reach the collective ``ckey`` of ``target``: always,
    unless the target reaches it only under some assignments of its case
    parameters and the call's arguments (or the defaults it leaves) select
    none of them, or the target reaches only module memos the constructors
    of the calling method's family filled (:mod:`~cslint.analysis.memofills`)."""
    covered = program.memo_covered.get(id(site))
    if covered is not None and target.key in covered:
        return False
    cases = program.reach_when.get((target.key, mode), {}).get(ckey)
    if cases is None:
        return True
    offset = call_offset(site, target) if site.ref is not None else 0
    passed = passed_values(target.params, target.case_params, receiver_shift(target, offset),
                           site.consts, site.star, site.args, site.kwargs)
    return call_allows(target.case_params, cases, passed)


def handed_cases(program: Program, fn: FuncFacts, site: Site, target: FuncFacts, offset: int, mode: frozenset,
                 ckey: tuple) -> Optional[frozenset]:
    """The assignments of ``fn``'s case parameters under which its call
    ``site`` reaches the collective ``ckey`` of ``target`` (None: all): those
    under which the site runs (``Site.when``), less those whose values of the
    case parameters the call hands on as they are (``Site.forwarded``)
    select none of the assignments under which ``target`` reaches it.
    ``def rearrange(self, is_profile=False): move(w, is_profile)``, with
    ``move`` reaching a barrier only ``if is_profile:``, reaches it only where
    ``rearrange``'s own ``is_profile`` is True, so ``self.rearrange()``
    reaches none."""
    cases = program.reach_when.get((target.key, mode), {}).get(ckey) if site.forwarded else None
    if cases is None:
        return site.when
    entered = site.when if site.when is not None else case_assignments(fn.case_params)
    kept = frozenset(case for case in entered if call_allows(target.case_params, cases, passed_values(
        target.params, target.case_params, receiver_shift(target, offset), site.consts, site.star,
        site.args, site.kwargs, site.forwarded, case)))
    return None if site.when is None and len(kept) == len(entered) else kept


def bound_group(site: Site, target: FuncFacts, offset: int, group: str, program=None) -> str:
    """The group a collective of ``target`` over ``group`` runs over when
    ``site`` calls it: where ``group`` is one of the target's parameters
    (``def all_reduce_flags(flags, group): dist.all_reduce(t, group=group)``),
    the group the call passes for it (``get_tp_group().cpu_group``: ``tp``);
    where it is a parameter's attribute (``self.device_group`` in a method
    of a group coordinator, ``group.cpu_group``), that attribute of what the
    call passes there (``get_tp_group().all_reduce(x)``: ``tp``); the group
    the target falls back on where the call passes nothing or None for a
    parameter it binds to one then (``group = get_tp_group() if group is
    None else group``: ``FuncFacts.default_groups``); ``group`` itself where
    the call passes nothing there or nothing a group can be read from.
    ``offset``: 1 where the call does not pass the instance; with
    ``program``, a parameter the target hands on unbound to such fallbacks
    falls back on their group too (:func:`handed_default`).  A group a nested
    function reads from its enclosing scope is that scope's
    (:func:`closure_group`)."""
    if target.free_names and group.startswith("group:"):
        group = closure_group(site, target, group)
    if not group.startswith("group:") or not site.group_args and not target.default_groups \
            and not (program is not None and target.unbound_none_params):
        return group
    argument = passed_argument(site, target, offset, group[len("group:"):], program)
    if argument is None:
        return group
    found, name, position, rest = argument
    if found == "" or found is None and _passes_nothing(site, name, position):
        fallback = dict(target.default_groups).get(name) if target.default_groups else None
        if fallback is None and program is not None and name in target.unbound_none_params:
            fallback = handed_default(program, target, name)
        if fallback is not None:
            return fallback  # nothing or None passed where the callee falls back on a group its text names
    if found is None:
        return group
    held = program.construction_passed.get(id(site)) if program is not None and found else None
    if held is not None and found in held:
        found = held[found]  # a field of the caller's object every construction hands one group
    else:
        found = text_group(found) if found else "world"  # ``None`` passed is the world
    if not found.startswith("group:") or not rest:
        return found  # a group's own process groups are that group (``get_tp_group().device_group``)
    bound = f"{found}.{rest}"
    if bound.count(".") >= MAX_GROUP_PATH_NAMES:
        # k-limited: a call through an attribute of the same object
        # (``self.optim.step()`` resolved to the ``step`` that calls it) would
        # lengthen the path on every round of the fixpoint
        return group
    return bound


def passed_argument(site: Site, target: FuncFacts, offset: int, path: str, program=None) -> Optional[tuple]:
    """``(text, name, position, rest)`` for a dotted ``path`` of ``target``
    whose first name is one of its parameters: the text the call ``site``
    passes for that parameter (``Site.group_args``: by keyword, else by
    position; None where it passes nothing it names), the parameter, its
    position among the call's arguments (``offset``: 1 where the call does
    not pass the instance) and the rest of the path past it.  Of a
    constructor call, a field its ``__init__`` sets from a parameter
    (``self.group = group``, ``FuncFacts.field_params``) is what the call
    passes there (with ``program``: :func:`held_field_params`).  None where
    the first name is no parameter, or a field no parameter sets."""
    name, _, rest = path.partition(".")
    if name not in target.params:
        return None
    passed = dict(site.group_args)
    found = passed.get(name)
    fields = held_field_params(program, target) if found is None and offset else ()
    if fields and name == target.params[0]:
        field, _, rest = rest.partition(".")
        name = dict(fields).get(field)
        if name is None:
            return None
        found = passed.get(name)
    position = target.params.index(name) - receiver_shift(target, offset)
    if found is None and not site.star:
        found = passed.get(position) if position >= 0 else None
    return found, name, position, rest


def closure_group(site: Site, target: FuncFacts, group: str) -> str:
    """The group ``group`` (``group:<text>``) of a collective that the nested
    function ``target`` reaches, as the call ``site`` sees it, where the
    text's first name is one of the closure's free variables
    (``FuncFacts.free_names``: the enclosing method's ``self``, a parameter
    or a local of an enclosing function).  A call by the closure's own name
    is made inside the scope that defines it (a sibling, the enclosing
    function, the closure itself), which shares those names, so the text
    stays the caller's to bind.  Any other call -- through an object the
    closure was attached to (``param.gather_all = gather_all``), a value it
    was returned or handed as -- runs it with the enclosing call's values,
    which the caller's names of the same spelling are not: its ``self`` is
    another object.  The group is then unknown to the caller, named after
    the defining scope in a form no parameter can spell (``<Owner.convert>.
    self.group``), so no call binds it and it spans every dimension."""
    text = group[len("group:"):]
    if text.partition(".")[0] not in target.free_names:
        return group
    ref = site.ref
    if ref is not None and ref.tag == "func" and ref.qualname == target.qualname and ref.module == target.module:
        return group
    return f"group:<{target.qualname.rpartition('.<locals>.')[0]}>.{text}"


#: how many functions deep a parameter handed on unbound is followed to a fallback
MAX_HANDED_DEPTH = 3


def handed_default(program, target: FuncFacts, name: str, depth: int = 0) -> Optional[str]:
    """The group the collectives of ``target`` over its parameter ``name``
    run over where a call passes nothing or None there: ``name`` defaults to
    None, ``target`` never rebinds it (``FuncFacts.unbound_none_params``),
    issues no collective over it itself and hands it on, as it is and only
    so, to callees each of which falls back on one same group where it is
    None (``agree(value, group=None)`` calling ``gather(value, group=group)``,
    which binds ``group = get_tp_group() if group is None else group``:
    ``FuncFacts.default_groups``, or such a hand-on of its own, up to
    :data:`MAX_HANDED_DEPTH` deep); None otherwise.  Read from the facts
    alone, so the answer is the same in every round of the fixpoint;
    worked out once per function and parameter."""
    memo = program.__dict__.setdefault("_handed_defaults", {})
    key = (target.key, name)
    if key in memo:
        return memo[key]
    memo[key] = None  # (a call back into it while it is worked out hands on nothing known)
    groups: set = set()
    mine, inner = f"group:{name}", f"group:{name}."
    for variant in target.variants.values():
        for site in variant.sites:
            if site.collective is not None and (site.collective.group == mine
                                                or site.collective.group.startswith(inner)):
                return None  # over the parameter itself: None there is the world
            handed = [k for k, text in site.group_args if text == name or text.startswith(name + ".")]
            if not handed:
                continue
            if site.star or site.ref is None or depth >= MAX_HANDED_DEPTH \
                    or any(text != name for k, text in site.group_args if k in handed):
                return None
            callees = program.resolver.resolve(site.ref)
            if not callees:
                return None
            for callee in callees:
                offset = call_offset(site, callee)
                for passed_as in handed:
                    param = passed_as if type(passed_as) is str else \
                        _param_at(callee, passed_as + receiver_shift(callee, offset))
                    if param is None or param == "self":
                        return None
                    fallback = dict(callee.default_groups).get(param) if callee.default_groups else None
                    if fallback is None and param in callee.unbound_none_params:
                        fallback = handed_default(program, callee, param, depth + 1)
                    if fallback is None:
                        return None
                    groups.add(fallback)
    found = memo[key] = next(iter(groups)) if len(groups) == 1 else None
    return found


def _param_at(target: FuncFacts, index: int) -> Optional[str]:
    """The name of ``target``'s parameter at ``index`` (a plain positional one), or None."""
    if not 0 <= index < len(target.params):
        return None
    name = target.params[index]
    return None if name.startswith("*") else name


def _passes_nothing(site: Site, name: str, position: int) -> bool:
    """Whether the call ``site`` passes nothing for the parameter ``name``
    at ``position`` (the callee's default then holds)."""
    return not site.star and not 0 <= position < len(site.args) \
        and all(keyword != name for keyword, _value in site.kwargs)


@functools.lru_cache(maxsize=4096)
def text_group(text: str) -> str:
    """The group an argument's text names (``get_tp_group().cpu_group``: ``tp``), else ``group:<text>``."""
    return group_from_text(text) or f"group:{text}"


def _add_reach(reach: dict, reach_when: dict, key: tuple, cases, entry) -> bool:
    """Note that a function reaches the collective ``key`` under the
    assignments ``cases`` (None: all); ``entry()`` makes its first
    explanation.  Whether the tables changed."""
    if key not in reach:
        reach[key] = entry()
        if cases is not None:
            reach_when[key] = cases
        return True
    return _widen(reach_when, key, cases)


def _widen(table: dict, key: tuple, cases) -> bool:
    """Add the assignments ``cases`` (None: all) under which ``key`` is
    reached; whether the entry grew.  A key absent from ``table`` is reached
    under every assignment already."""
    if key not in table:
        return False
    if cases is None:
        del table[key]
        return True
    merged = table[key] | cases
    if merged == table[key]:
        return False
    table[key] = merged
    return True


def seen_from(facts, site: Site, target, fn):
    """A callee's collective facts as its caller ``fn`` can name them."""
    if facts is None or site.ref is None:
        return None
    return translate(facts, site.ref, target.module == fn.module)
