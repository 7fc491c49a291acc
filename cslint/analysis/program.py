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

from ..presets import ALL_DIMS, KIND_FILESYSTEM, Knowledge, group_from_text
from .atoms import BY_METHOD, ENTRY_FIELD, IDENT, OWN_FIELD, OWN_PARAM, field_name
from .callrefs import THROUGH_INSTANCE
from .callfacts import translate
from .callercontext import pass_calling_context, reads_no_context
from .constructions import BUILT_APART, built_reads, constructor_fields, stored_apart
from .presentfields import absent_written_fields, present_read
from .demand import demanded
from .divergence import MAX_SOURCES, canonical_order, dims_in, extend_via, merge, param_slot, substituted, transformed
from .feasibility import call_allows, passed_values
from .positions import parameter_table
from .processes import marked, runs_only_where
from .reads import CALLEE_REFS, ProgramReads, by_method_tables, element_stored_fields, entry_fields
from .records import FuncFacts, Site
from .resolution import Resolver, issued_collective
from .selfcalls import SELF_REFS, MethodWrites, note_self_call
from .syntax import CONSTRUCTORS

MAX_ROUNDS = 40
#: the most names a group's access path may have where a call binds it
#: (``self.module.pg.group``: 4); a longer one keeps the callee's own text
MAX_GROUP_PATH_NAMES = 4


EMPTY_ATOMS: frozenset = frozenset()

#: Source kinds that count where they decide a collective directly, but do
#: not make everything a callee assigns divergent when they decide the call:
#: a script that converts a checkpoint only if the file exists constructs its
#: communicator wrapper under that test without any rank skipping anything.
DIRECT_ONLY_KINDS = frozenset({KIND_FILESYSTEM})


class Program(ProgramReads):
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
        self.method_writes = MethodWrites(self.funcs, self.resolver.family)  # what a method writes through self calls
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
        #: canonical orders worked out ahead of need by another process (see :func:`atom_sets`):
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
        self._seed_signal_handler_fields()
        #: function key -> the dimensions no two ranks running it differ along
        self.single_rank_dims = runs_only_where(self.funcs.values(), self.files, self.resolver,
                                                "single_rank_bindings", knowledge.world)
        #: function key -> the dimensions of a group that has several ranks wherever it runs: the sources
        #: of what it writes out are marked so (processes.py)
        self.several_rank_dims = runs_only_where(self.funcs.values(), self.files, self.resolver,
                                                 "several_rank_bindings", knowledge.world)
        self._marking = None  # while such a function is stepped: those dimensions

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

    # -- values --------------------------------------------------------------------
    def variant(self, fn: FuncFacts, mode: frozenset):
        """The function's facts under a mode assignment (its only variant
        when its tests name no mode)."""
        v = fn.variants.get(None)
        if v is None:
            v = fn.variants.get(mode)
        return v

    def eval(self, atoms: frozenset, mode: frozenset) -> dict:
        """The divergence map of an atom set (parameters left symbolic)."""
        if not atoms:
            return {}
        key = (atoms, mode)
        cached = self.memo.get(key)
        if cached is not None:
            return cached
        self.memo[key] = {}  # recursion guard
        out: dict = {}
        known = out.get
        for atom in (atoms if len(atoms) == 1 else self._in_order(atoms)):
            for k, entry in self.eval_atom(atom, mode).items():
                # merge(out, k, *entry), its common cases inline
                old = known(k)
                if old is None:
                    if len(out) < MAX_SOURCES:
                        out[k] = entry
                    else:
                        merge(out, k, entry[0], entry[1])
                elif not entry[0] <= old[0]:
                    out[k] = (old[0] | entry[0], old[1])
        self.memo[key] = out
        return out

    def seen_through(self, value: dict, transform: str) -> dict:
        """``transformed(value, transform)`` of a map :meth:`eval` returned.
        Those maps are never changed once made (the memo hands the same map
        to every reader in a round), so the projection of one is made once:
        a projection of a shared set is read from every set that holds it."""
        if transform == IDENT or not value:
            return value
        key = (id(value), transform)
        known = self._projections.get(key)
        if known is not None and known[0] is value:
            return known[1]
        out = transformed(value, transform)
        self._projections[key] = (value, out)  # the map kept: its id stays its own
        return out

    def _in_order(self, atoms: frozenset) -> tuple:
        """``atoms`` in a canonical order.  A divergence map keeps the first
        explanation it is given and stops taking sources past its cap, so the
        order atoms are evaluated in picks the sources and flows a finding
        cites; a frozenset's own order follows the hash seed and how the set
        was built (a set unpickled from a worker iterates differently)."""
        found = self._ordered.get(atoms)
        if found is None:
            positions = self.orders_ahead.get(atoms) if self.orders_ahead is not None else None
            if positions is None:
                found = canonical_order(atoms, self._digests)
            else:
                listed = list(atoms)
                found = tuple(listed[i] for i in positions)
            self._ordered[atoms] = found
        return found

    def eval_atom(self, atom: tuple, mode: frozenset) -> dict:
        # the most common tags first: projections, calls, fields, parameters
        tag = atom.tag
        if tag == "J":
            return self.seen_through(self.eval(atom.inner, mode), atom.transform)
        if tag == "R":
            return self._returned(atom, mode)
        if tag == "F":
            return self._field_value(atom, mode)
        if tag == "P":
            return {param_slot(atom.index): (ALL_DIMS, ())}
        if tag == "A":
            return self._attribute_value(atom, mode)
        if tag == "S":
            if self._passed_rank_params and atom[:6] in self._passed_rank_params:
                return {}  # what the callers pass, read through the parameter itself, also seen through a transform
            dims = dims_in(atom.dims, mode)
            if self._inside_dims is not None and dims:
                dims = self._inside_dims(dims)
            return {atom: (dims, ())} if dims else {}
        if tag == "G":
            return self.global_value(atom.module, atom.name, mode)
        if tag == "C":
            world = self.knowledge.world
            span = world.span(atom.group)
            out = {}
            for k, (dims, via) in self.eval(atom.inner, mode).items():
                rest = world.residual(dims, span)
                if rest:
                    out[k] = (rest, via)
            return out
        if tag == "E" or tag == "T":
            return self._raised_by(atom, mode)
        if tag == "X":
            return self._escaped_by(atom, mode)
        return {}

    def _with_properties(self, value: dict, readers: list, attr: str, mode: frozenset) -> dict:
        """A field's value joined with what the properties of that name
        return: reading a property runs it."""
        out = dict(value)
        for fn in readers:
            link = (fn.path, fn.line, f"`{fn.qualname}` is a property: reading it returns this")
            self.link_functions[link] = ("return", (fn.key,), f"self.{attr}")
            for k, (dims, via) in self.rets.get((fn.key, mode), {}).items():
                if k.tag != "PARAM":
                    merge(out, k, dims, extend_via(via, link))
        return out

    def global_value(self, module: str, name: str, mode: frozenset) -> dict:
        key = (module, name, mode)
        if key in self.globals:
            return self.globals[key]
        if key in self._globals_busy:
            return {}
        ff = self.modules.get(module)
        atoms = ff.globals.get(name) if ff else None
        if not atoms:
            self.globals[key] = {}
            return {}
        self._globals_busy.add(key)
        value = self.concrete(self.eval(atoms, mode), None, mode)
        self._globals_busy.discard(key)
        self.globals[key] = value
        return value

    def concrete(self, value: dict, fn: Optional[FuncFacts], mode: frozenset) -> dict:
        """Replace symbolic parameters by what callers pass (and, while a function that runs only where a
        group has several ranks is stepped, mark the sources it writes out: processes.py)."""
        out = self._concrete(value, fn, mode)
        return out if self._marking is None or not out else marked(out, self._marking)

    def _concrete(self, value: dict, fn: Optional[FuncFacts], mode: frozenset) -> dict:
        for k in value:
            if k.tag == "PARAM":
                break
        else:
            return value
        if fn is None:
            return substituted(value, lambda k: None)
        params = self.params

        def passed(k):
            table = params.get((fn.key, k.index, mode))
            return table if table is not None or k.index < OWN_PARAM else parameter_table(params, fn.key, k.index, mode)

        return substituted(value, passed)

    def _collective_span(self, atoms: frozenset, mode: frozenset) -> frozenset:
        """The dimensions every rank that computes ``atoms`` has just synchronised
        along: each atom is a collective's result, or the result of a call that
        reaches collectives (their groups' spans); empty when some atom is
        neither."""
        if not atoms:
            return frozenset()
        spans = []
        for atom in atoms:
            if atom.tag == "C":
                spans.append(self.knowledge.world.span(atom.group))
            elif atom.tag == "R":
                groups = {group for target in self.resolver.resolve(atom.ref)
                          for (_name, group) in self.reach.get((target.key, mode), {})}
                if not groups:
                    return frozenset()
                spans.append(frozenset.intersection(*(self.knowledge.world.span(g) for g in groups)))
            elif atom.tag == "J" and self._collective_span(atom.inner, mode):  # a length, a test of such a result
                spans.append(self._collective_span(atom.inner, mode))
            else:
                return frozenset()
        return frozenset.intersection(*spans)

    # -- fixpoint --------------------------------------------------------------------
    def solve(self) -> None:
        """Semi-naive fixpoint: a function is re-evaluated only when a table
        entry it reads (its parameters, the fields, returns and collective
        reach it refers to) changed in the previous round."""
        funcs = stepped(self)
        # table entry -> the positions of the functions that read it; the
        # first round steps every function, so they are needed from the
        # second round on (and worked out ahead by the helper, if one runs)
        readers: Optional[dict] = None
        self.changed_keys = set()
        dirty = None
        for _round in range(MAX_ROUNDS):
            self.memo = {}
            self._projections = {}
            self.globals = {}
            self.changed_keys = set()
            if dirty is None:
                due = funcs
            else:  # the readers of what changed, in the order of the first round
                readers = readers or _readers(self, funcs)
                positions = set()
                for key in dirty:
                    positions.update(readers.get(key, ()))
                due = [funcs[position] for position in sorted(positions)]
            ahead = self.orders_ahead if dirty is None else None
            for position, fn in enumerate(due):
                if ahead is not None:
                    ahead.stepping(position)
                for mode in self.modes:
                    v = self.variant(fn, mode)
                    if v is None:
                        continue
                    self._step(fn, v, mode)
            if not self.changed_keys:
                break
            dirty = self.changed_keys

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
        # (the implicit flow of the assignment), its own fields do not.
        field_ctx = {} if fn.qualname.rsplit(".", 1)[-1] in CONSTRUCTORS else calling_ctx
        for write in v.fields:
            class_key, attr, atoms, line, element, absent = write
            write_ctx = {} if attr in fn.restored_fields else field_ctx  # put back past the caller's ``with``
            if not atoms and not write_ctx:
                continue
            own = self.eval(atoms, mode) if atoms else {}
            value = dict(self.concrete(own, fn, mode))
            apart = stored_apart(fn, write, own, self.resolver.family)  # constructions.py
            if apart and self._marking is not None:
                apart = marked(apart, self._marking)
            # A value that is the result of collectives this function issues (or
            # is decided by calls that issue them) is written by every rank of
            # their groups alike: a rank that did not run the function skipped the
            # collective too, a hazard of its own at the call.  So the calling
            # conditions only count along the dimensions those groups do not span
            # (the field's own earlier value, read by the test guarding the write, adds no rank).
            family = self.resolver.family(class_key)
            synced = self._collective_span(frozenset(a for a in atoms if not any(
                f.tag == "F" and f.attr == attr and self.resolver.family(f.class_key) == family
                for f in (a.inner if a.tag == "J" else (a,)))), mode)
            own_value = dict(value)  # without the callers' conditions: the by-method tables (selfcalls.py)
            for k, (dims, via) in write_ctx.items():
                rest = self.knowledge.world.residual(dims, synced)
                if rest and k not in value:
                    value[k] = (rest, via)
            if not value and not own_value:
                continue
            named = field_name(attr)
            link = (fn.path, line, f"`self.{named}` is assigned from it in `{fn.qualname}`")
            self.link_functions[link] = ("field", (fn.key,), f"self.{named}")
            for written in self._written_tables(family, attr, element, fn, absent):
                table = self.fields.setdefault((family, written, mode), {})
                for k, (dims, via) in (own_value if BY_METHOD in written else value if apart is None
                                       or not written.endswith(BUILT_APART) else apart).items():
                    if merge(table, k, dims, extend_via(via, link)):
                        changed = True
                        self.changed_keys.add(("field", family, written))
        reach = self.reach.setdefault((fn.key, mode), {})
        reach_when = self.reach_when.setdefault((fn.key, mode), {})
        for site in v.sites:
            if issued_collective(self.resolver, site) is not None:
                name, group, api = site.collective
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
                        if merge(table, k, dims, extend_via(via, link)):
                            changed = True
                            self.changed_keys.add(("ctx", target.key))
            offset = 1 if site.ref.tag in THROUGH_INSTANCE or site.ref.tag == "class" else 0
            for target in targets:
                if target.qualname.endswith("__init__") and site.ref.tag == "qual":
                    offset = 1
                if self._pass_arguments(fn, site, target, offset, mode):
                    changed = True
                # a copy: where ``target`` is ``fn`` itself (a recursive call),
                # what this loop adds goes into the table it walks
                for ckey, (api, chain, facts) in list(self.reach.get((target.key, mode), {}).items()):
                    if not call_reaches(self, site, target, mode, ckey):
                        continue
                    bound = bound_group(site, target, offset, ckey[1])
                    if bound != ckey[1]:
                        ckey = (ckey[0], bound)
                    if _add_reach(reach, reach_when, ckey, site.when, lambda: (
                            api, ((fn.path, site.span.line, f"`{site.callee}()` calls `{target.qualname}`"),) + chain[:6],
                            seen_from(facts, site, target, fn))):
                        changed = True
                        self.changed_keys.add(("reach", fn.key))
        return pass_calling_context(self, fn, v, calling_ctx, mode, DIRECT_ONLY_KINDS) or changed


#: the parts of :func:`atom_sets`: what a step of the fixpoint evaluates,
#: then what the hazards ask after it
STEP_SETS, CONDITION_SETS = "steps", "conditions"


def atom_sets(program: Program, parts=(STEP_SETS, CONDITION_SETS), seen: Optional[set] = None, reached=None):
    """The sets of several atoms that the fixpoint and the questions after it
    put in canonical order (:meth:`Program._in_order`), each once, in about
    the order they first meet them: the first round steps every function in
    order (its returns, field writes and calls: a set before the sets its
    atoms read), then the hazards ask about the conditions of the call
    sites.  ``parts``: which of the two; ``seen``: the ids of the sets
    given already (by an earlier call for another part); ``reached()``: the
    position of the function the first round steps now (the step sets of
    the functions before it are not given: they were needed already).  What a call reads follows the references resolved so far
    (:meth:`~cslint.analysis.resolution.Resolver.resolved`): the arguments
    of a call that runs a function of the tree, the fallback of one that
    runs none; nothing is resolved here, so the resolver's memo stays as the
    fixpoint would find it."""
    seen = set() if seen is None else seen
    modules = program.modules
    resolved = program.resolver.resolved

    def reads(atom) -> list:
        """The atom sets the evaluation of ``atom`` reads (``Program.eval_atom``)."""
        tag = atom.tag
        if tag == "J" or tag == "C" or tag == "A":
            return [atom.inner]
        if tag == "R":  # ProgramReads._returned
            targets = resolved(atom.ref)
            if targets is not None and (not targets or atom.ref.tag == "class"
                                        or any(fn.qualname.endswith("__init__") for fn in targets)):
                return [atom.fallback]
            out = list(atom.args)  # bound to the callees' parameters
            out.extend(arg for _, arg in atom.kwargs)
            if targets is None:  # not resolved yet: either
                out.append(atom.fallback)
            return out
        if tag == "G":
            module = modules.get(atom.module)
            found = module.globals.get(atom.name) if module is not None else None
            return [found] if found else []
        if tag == "E" or tag == "T":
            return [found for fn in resolved(atom.ref) or () if fn.raises for v in fn.variants.values()
                    for found in (v.raised, v.raised_tree if tag == "T" else None) if found]
        return []

    def in_step(v):
        yield v.returns
        for write in v.fields:
            yield write.atoms
        for site in v.sites:
            if resolved(site.ref):  # a call that runs nothing of the tree passes nothing on
                yield getattr(site, "ctx_atoms", EMPTY_ATOMS)
                yield from site.args
                for _, arg in site.kwargs:
                    yield arg

    def conditions(v):
        for site in v.sites:
            for cond in site.conds:
                yield cond.atoms
                for _span, atoms, _presence in cond.operands:
                    yield atoms

    for walk in [{STEP_SETS: in_step, CONDITION_SETS: conditions}[part] for part in parts]:
        # (a summary's call sites carry no conditions: SummaryWalk._calls)
        functions = stepped(program) if walk is in_step else [fn for fn in program.funcs.values() if fn.deep]
        for position, fn in enumerate(functions):
            if reached is not None and walk is in_step and position < reached():
                continue
            for v in fn.variants.values():
                for top in walk(v):
                    stack = [top]
                    while stack:  # depth first, a set before the sets its atoms read
                        atoms = stack.pop()
                        if not atoms or id(atoms) in seen:
                            continue
                        seen.add(id(atoms))
                        if len(atoms) > 1:
                            yield atoms
                        below = []
                        for atom in atoms:
                            below.extend(reads(atom))
                        stack.extend(reversed(below))


def stepped(program: Program) -> list:
    """The functions the fixpoint steps, in order: those whose tables the hazards may read (demand.py)."""
    if program.demanded is None:
        program.demanded = demanded(program, table_reads)
    return program.demanded


def _readers(program: Program, funcs: list) -> dict:
    """:func:`readers_of` ``funcs`` (a position may be listed twice for an
    entry), with the helper that orders atom sets ahead, if one runs (it
    answers what this process would: the resolver's answers do not depend
    on the order of the questions)."""
    if program.orders_ahead is not None:
        return program.orders_ahead.readers(program, funcs)
    return readers_of(program, funcs)


def readers_of(program: Program, funcs: list, positions=None, into: Optional[dict] = None) -> dict:
    """Table entry -> the positions in ``funcs`` of the functions whose step
    may read it (:func:`table_reads`); of the functions at ``positions``
    only (default: all, in increasing order), added to ``into``."""
    readers: dict = {} if into is None else into
    known = program.step_reads
    for position in range(len(funcs)) if positions is None else positions:
        for needed in known.get(funcs[position].key) or table_reads(program, funcs[position]):
            readers.setdefault(needed, []).append(position)
    return readers


def table_reads(program: Program, fn: FuncFacts, conditions: Optional[set] = None) -> set:
    """The table entries a step of ``fn`` may read: its parameters and
    calling context, the returns of what its calls and property reads may
    run, the fields it reads, the collectives its callees reach (keys of
    ``Program.changed_keys``); ``conditions`` gets what its sites' conditions read besides."""
    out = {("param", fn.key)} if reads_no_context(fn) else {("param", fn.key), ("ctx", fn.key)}
    seen = set()
    family_of = program.resolver.family
    resolve = program.resolver.resolve
    field_families = program.resolver.receivers.field_families
    properties = program.properties
    modules = program.modules

    def atoms_deps(atoms):
        for atom in atoms:
            tag = atom.tag
            if tag == "J" or tag == "C":
                # Collective results and projections nest (a loop re-reads
                # its own allreduce): the atom graph is a DAG with shared
                # parts, so visit each one once or the walk is exponential.
                key = id(atom)
                if key not in seen:
                    seen.add(key)
                    atoms_deps(atom.inner)
            elif tag == "R":
                key = id(atom)
                if key in seen:
                    continue
                seen.add(key)
                for target in resolve(atom.ref):
                    out.add(("ret", target.key))
                for arg in atom.args:
                    atoms_deps(arg)
                for _, arg in atom.kwargs:
                    atoms_deps(arg)
                atoms_deps(atom.fallback)
            elif tag == "F":
                family = family_of(atom.class_key)
                out.add(("field", family, atom.attr))
                attr = atom.attr
                if BY_METHOD in attr:
                    out.update(("field", family, table) for table in by_method_tables(program, family, attr))
                    continue
                if attr.endswith(OWN_FIELD) or ENTRY_FIELD in attr:
                    attr = field_name(attr)
                    out.add(("field", family, attr))  # (the field itself where no element or position is apart)
                for reader in properties.get((family, attr), ()):
                    out.add(("ret", reader.key))
            elif tag == "A":
                key = id(atom)
                if key in seen:
                    continue
                seen.add(key)
                atoms_deps(atom.inner)
                for inner in atom.inner:
                    if (held := present_read(inner, program.absent_fields, family_of)) is not inner:
                        out.add(("field", family_of(inner.class_key), held.attr))
                    families = field_families(inner, atom.attr)
                    out.update(("field", family, atom.attr) for family in families)
                    for table, stored in built_reads(program, inner, atom.attr, families):  # constructions.py
                        out.add(table)
                        atoms_deps(stored)
            elif tag == "G":
                # a module-level value depends on what its own atoms read
                key = ("G", atom.module, atom.name)
                if key in seen:
                    continue
                seen.add(key)
                module = modules.get(atom.module)
                atoms_deps((module.globals.get(atom.name) if module else None) or ())
            elif (tag == "E" or tag == "T") and id(atom) not in seen:
                seen.add(id(atom))  # what decides that a callee raises (ProgramReads._raised_by)
                for target in program.raising_targets(atom.ref):
                    out.add(("param", target.key))
                    for variant in target.variants.values():
                        atoms_deps(variant.raised or ())
                        atoms_deps(variant.raised_tree or ())
            elif tag == "X" and id(atom) not in seen:
                seen.add(id(atom))  # what decides that a callee fails on this rank (ProgramReads._escaped_by)
                for target in resolve(atom.ref):
                    out.add(("param", target.key))
                    for variant in target.variants.values():
                        atoms_deps(variant.escapes or ())

    for v in fn.variants.values():
        atoms_deps(v.returns)
        for write in v.fields:
            atoms_deps(write.atoms)
        for site in v.sites:
            atoms_deps(getattr(site, "ctx_atoms", EMPTY_ATOMS))
            for arg in site.args:
                atoms_deps(arg)
            for _, arg in site.kwargs:
                atoms_deps(arg)
            if site.ref is not None:
                for target in resolve(site.ref):
                    out.add(("reach", target.key))
    if conditions is not None:  # what the walk below adds goes to ``conditions``
        step, out = out, conditions
        for cond in (cond for v in fn.variants.values() for site in v.sites for cond in site.conds):
            atoms_deps(cond.atoms)
            for _span, atoms, _presence in cond.operands:
                atoms_deps(atoms)
        out = step
    atoms_deps = None  # noqa: F841  the nested function refers to itself: without this, a reference cycle per call
    return out


def property_readers(resolver: Resolver) -> dict:
    """(family, attr) -> the property methods a read of ``self.attr`` may run
    in that class family: the attribute's value is what they return."""
    out: dict = {}
    for cls in resolver.classes.values():
        for name in cls.properties:
            fn = resolver.funcs.get(cls.methods.get(name))
            if fn is not None:
                out.setdefault((resolver.family(cls.key), name), []).append(fn)
    return out


def call_reaches(program: Program, site: Site, target: FuncFacts, mode: frozenset, ckey: tuple) -> bool:
    """Whether a call can reach the collective ``ckey`` of ``target``: always,
    unless the target reaches it only under some assignments of its case
    parameters and the call's arguments (or the defaults it leaves) select
    none of them."""
    cases = program.reach_when.get((target.key, mode), {}).get(ckey)
    if cases is None:
        return True
    offset = 1 if site.ref is not None and (site.ref.tag in THROUGH_INSTANCE or site.ref.tag == "class") else 0
    if target.qualname.endswith("__init__") and site.ref is not None and site.ref.tag == "qual":
        offset = 1
    passed = passed_values(target.params, target.case_params, target.self_offset if offset else 0,
                           site.consts, site.star, site.args, site.kwargs)
    return call_allows(target.case_params, cases, passed)


def call_offset(site: Site, target: FuncFacts) -> int:
    """1 where the call ``site`` does not pass ``target`` its instance
    (``obj.method()``, ``Cls()`` for ``__init__``), else 0."""
    if site.ref.tag in THROUGH_INSTANCE or site.ref.tag == "class":
        return 1
    return 1 if target.qualname.endswith("__init__") and site.ref.tag == "qual" else 0


def bound_group(site: Site, target: FuncFacts, offset: int, group: str) -> str:
    """The group a collective of ``target`` over ``group`` runs over when
    ``site`` calls it: where ``group`` is one of the target's parameters
    (``def all_reduce_flags(flags, group): dist.all_reduce(t, group=group)``),
    the group the call passes for it (``get_tp_group().cpu_group``: ``tp``);
    where it is a parameter's attribute (``self.device_group`` in a method
    of a group coordinator, ``group.cpu_group``), that attribute of what the
    call passes there (``get_tp_group().all_reduce(x)``: ``tp``); ``group``
    itself where the call passes nothing there or nothing a group can be
    read from.  ``offset``: 1 where the call does not pass the instance."""
    if not site.group_args or not group.startswith("group:"):
        return group
    name, dot, rest = group[len("group:"):].partition(".")
    if name not in target.params:
        return group
    passed = dict(site.group_args)
    found = passed.get(name)
    if found is None and offset and target.field_params and name == target.params[0]:
        # a constructor call: a field its ``__init__`` sets from a parameter
        # (``self.group = group``) holds what the call passes there
        field, _, deeper = rest.partition(".")
        param = dict(target.field_params).get(field)
        if param is None:
            return group
        name, dot, rest = param, ".", deeper
        dot = dot if deeper else ""
        found = passed.get(name)
    if found is None and not site.star:
        position = target.params.index(name) - (target.self_offset if offset else 0)
        found = passed.get(position) if position >= 0 else None
    if found is None:
        return group
    found = text_group(found) if found else "world"  # ``None`` passed is the world
    if not found.startswith("group:") or not dot:
        return found  # a group's own process groups are that group (``get_tp_group().device_group``)
    bound = f"{found}.{rest}"
    if bound.count(".") >= MAX_GROUP_PATH_NAMES:
        # k-limited: a call through an attribute of the same object
        # (``self.optim.step()`` resolved to the ``step`` that calls it) would
        # lengthen the path on every round of the fixpoint
        return group
    return bound


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
