"""What a step of the whole-tree fixpoint reads, worked out from the atoms
alone: the table entries each function's step may read (:func:`table_reads`,
so a round steps only the readers of what changed), the functions the
fixpoint steps at all (:func:`stepped`, demand.py), and the atom sets the
fixpoint and the questions after it put in canonical order, in about the
order they meet them (:func:`atom_sets`, for the helper that orders them
ahead).
"""

from __future__ import annotations

from typing import Optional

from .atoms import BY_METHOD, ENTRY_FIELD, OWN_FIELD, REBUILT_APART, field_name
from .callercontext import reads_no_context
from .constructions import built_reads
from .demand import demanded
from .presentfields import present_read
from .fieldreads import by_method_tables
from .records import FuncFacts
from .resolution import Resolver
from .syntax import CONSTRUCTORS

EMPTY_ATOMS: frozenset = frozenset()


#: the parts of :func:`atom_sets`: what a step of the fixpoint evaluates,
#: then what the hazards ask after it
STEP_SETS, CONDITION_SETS = "steps", "conditions"


def atom_sets(program, parts=(STEP_SETS, CONDITION_SETS), seen: Optional[set] = None, reached=None):
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


def stepped(program) -> list:
    """The functions the fixpoint steps, in order: those whose tables the hazards may read (demand.py)."""
    if program.demanded is None:
        program.demanded = demanded(program, table_reads)
    return program.demanded


def fixpoint_readers(program, funcs: list) -> dict:
    """:func:`readers_of` ``funcs`` (a position may be listed twice for an
    entry), with the helper that orders atom sets ahead, if one runs (it
    answers what this process would: the resolver's answers do not depend
    on the order of the questions)."""
    if program.orders_ahead is not None:
        return program.orders_ahead.readers(program, funcs)
    return readers_of(program, funcs)


def readers_of(program, funcs: list, positions=None, into: Optional[dict] = None) -> dict:
    """Table entry -> the positions in ``funcs`` of the functions whose step
    may read it (:func:`table_reads`); of the functions at ``positions``
    only (default: all, in increasing order), added to ``into``."""
    readers: dict = {} if into is None else into
    known = program.step_reads
    for position in range(len(funcs)) if positions is None else positions:
        for needed in known.get(funcs[position].key) or table_reads(program, funcs[position]):
            readers.setdefault(needed, []).append(position)
    return readers


def table_reads(program, fn: FuncFacts, conditions: Optional[set] = None) -> set:
    """The table entries a step of ``fn`` may read: its parameters and
    calling context, the returns of what its calls and property reads may
    run, the fields it reads, the collectives its callees reach (keys of
    ``Program.changed_keys``); ``conditions`` gets what its sites' conditions read besides."""
    out = {("param", fn.key)} if reads_no_context(fn) else {("param", fn.key), ("ctx", fn.key)}
    # the atoms already read (and ("G", module, name) of the module globals): an equal atom adds what it
    # added, so they are kept by value, which also spares an id() and a set.add call per atom
    seen: dict = {}
    # the atom sets already read: they share parts (one local's set handed to several calls, tested and
    # returned), and what a set adds, which its atoms alone decide, an equal set added the first time (to
    # ``out``: a condition's set read before adds to the step's reads, not to ``conditions``, and
    # demand.want reads the two together).  A dict, not a set: a store into it is not a call.
    visited: dict = {}
    family_of = program.resolver.family
    resolve = program.resolver.resolve
    field_families = program.resolver.receivers.field_families
    properties = program.properties
    modules = program.modules

    def atoms_deps(atoms):
        if atoms in visited:
            return
        visited[atoms] = None
        for atom in atoms:
            tag = atom.tag
            if tag == "J" or tag == "C":
                # Collective results and projections nest (a loop re-reads
                # its own allreduce): the atom graph is a DAG with shared
                # parts, so visit each one once or the walk is exponential.
                if atom not in seen:
                    seen[atom] = None
                    atoms_deps(atom.inner)
            elif tag == "R":
                if atom in seen:
                    continue
                seen[atom] = None
                targets = resolve(atom.ref)
                for target in targets:
                    out.add(("ret", target.key))
                if not targets:  # a function of the files read for their summaries: its returns read here
                    for callee in program.summarised_callees(atom.ref.ref if atom.ref.tag == "part" else atom.ref):
                        for variant in callee.variants.values():
                            if variant.returns:
                                atoms_deps(variant.returns)
                # (an empty set reads nothing: most arguments are constants)
                for arg in atom.args:
                    if arg:
                        atoms_deps(arg)
                for _, arg in atom.kwargs:
                    if arg:
                        atoms_deps(arg)
                if atom.fallback:
                    atoms_deps(atom.fallback)
            elif tag == "F":
                family = family_of(atom.class_key)
                out.add(("field", family, atom.attr))
                attr = atom.attr
                if BY_METHOD in attr:
                    out.update(("field", family, table) for table in by_method_tables(program, family, attr))
                    continue
                if attr.endswith(OWN_FIELD) or ENTRY_FIELD in attr or REBUILT_APART in attr:
                    attr = field_name(attr)
                    out.add(("field", family, attr))  # (the field itself where no element or position is apart)
                for reader in properties.get((family, attr), ()):
                    out.add(("ret", reader.key))
            elif tag == "A":
                if atom in seen:
                    continue
                seen[atom] = None
                atoms_deps(atom.inner)
                for inner in atom.inner:
                    if (held := present_read(inner, program.absent_fields, family_of)) is not inner:
                        out.add(("field", family_of(inner.class_key), held.attr))
                    if program.rebuilt_fields and (held := program.lacked_names.held_read(inner, atom.attr)):
                        out.add(("field", family_of(inner.class_key), held.attr))  # (lackednames.py)
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
                seen[key] = None
                module = modules.get(atom.module)
                atoms_deps((module.globals.get(atom.name) if module else None) or ())
            elif (tag == "E" or tag == "T") and atom not in seen:
                seen[atom] = None  # what decides that a callee raises (ProgramReads._raised_by)
                for target in program.raising_targets(atom.ref):
                    out.add(("param", target.key))
                    for variant in target.variants.values():
                        atoms_deps(variant.raised or ())
                        atoms_deps(variant.raised_tree or ())
            elif tag == "X" and atom not in seen:
                seen[atom] = None  # what decides that a callee fails on this rank (ProgramReads._escaped_by)
                for target in resolve(atom.ref):
                    out.add(("param", target.key))
                    for variant in target.variants.values():
                        atoms_deps(variant.escapes or ())

    def collective_reach(atoms):
        """What ``Program._collective_span`` reads of a field write's atoms: the collectives its calls reach."""
        for atom in atoms:
            if atom.tag == "R":
                out.update(("reach", target.key) for target in resolve(atom.ref))
            elif atom.tag == "J":
                collective_reach(atom.inner)

    # a constructor's field writes take no calling conditions (Program._step_marked), so no span is asked
    spans_asked = fn.qualname.rsplit(".", 1)[-1] not in CONSTRUCTORS
    for v in fn.variants.values():
        if v.returns:
            atoms_deps(v.returns)
        for write in v.fields:
            if write.atoms:
                atoms_deps(write.atoms)
                if spans_asked:
                    collective_reach(write.atoms)
        for site in v.sites:
            if site_ctx := getattr(site, "ctx_atoms", EMPTY_ATOMS):
                atoms_deps(site_ctx)
            for _attr, handed in site.handed:  # what it holds in the fields the call hands (selfcalls.note_handed)
                if handed:
                    atoms_deps(handed)
            for arg in site.args:
                if arg:
                    atoms_deps(arg)
            for _, arg in site.kwargs:
                if arg:
                    atoms_deps(arg)
            if site.ref is not None:
                for target in resolve(site.ref):
                    out.add(("reach", target.key))
    if conditions is not None:  # what the walk below adds goes to ``conditions``
        step, out = out, conditions
        for cond in (cond for v in fn.variants.values() for site in v.sites for cond in site.conds):
            if cond.atoms:
                atoms_deps(cond.atoms)
            for _span, atoms, _presence in cond.operands:
                if atoms:
                    atoms_deps(atoms)
        out = step
    atoms_deps = collective_reach = None  # noqa: F841  the nested functions refer to themselves: without this, a reference cycle per call
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
