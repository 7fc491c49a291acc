"""The divergence map of an atom set, read from the whole-tree fixpoint's
tables: what a projection, a call's result, a field, a parameter, a source,
a module global, a collective's result or a raise makes of the sets it
holds, memoised per round.  Mixed into
:class:`~cslint.analysis.program.Program`, which holds the tables and steps
the functions.
"""

from __future__ import annotations

from typing import Optional

from ..presets import ALL_DIMS
from .atoms import IDENT, OWN_PARAM
from .divergence import (
    MAX_SOURCES, canonical_order, dims_in, merge, param_slot, read_as_stored, substituted, transformed,
)
from .positions import parameter_table
from .processes import marked
from .reads import ProgramReads
from .records import FuncFacts


#: the step a computation read the tables in, where it read none (later than every step)
UNREAD = 1 << 62


class TableValues(ProgramReads):
    """What an atom set evaluates to over the fixpoint's tables (see the module docstring)."""

    #: the fixpoint's step now under way (one count per function stepped), and the
    #: earliest step whose tables the computation under way read (itself or
    #: through a map memoised then): :meth:`Program.solve` skips a step none of
    #: whose reads changed since
    _step_tick = 0
    _read_since = UNREAD
    #: while a step is under way: the memoised maps (and module globals) it used, by key, and whether
    #: one of them was made while a function that runs only where a group has several ranks was stepped
    #: (its sources marked so: processes.py), which a step of another function would not make alike
    _touched = _touched_globals = None
    _read_marked = False

    def variant(self, fn: FuncFacts, mode: frozenset):
        """The function's facts under a mode assignment (its only variant
        when its tests name no mode)."""
        v = fn.variants.get(None)
        if v is None:
            v = fn.variants.get(mode)
        return v

    def eval(self, atoms: frozenset, mode: frozenset) -> dict:
        """The divergence map of an atom set (parameters left symbolic).
        The memo keeps, beside each map, the earliest step (``_step_tick``)
        whose tables it read and the marking it was made under (``_marking``),
        and :attr:`_read_since` takes the earliest of the maps a computation
        uses (see :meth:`Program.solve`)."""
        if not atoms:
            return {}
        key = (atoms, mode)
        memo = self.memo
        if key in memo:
            cached = memo[key]
            # the memo-hit bookkeeping is written out here and in global_value, not shared:
            # eval is the most called function of the whole-tree pass, and a call per hit costs more
            if self._touched is not None:
                self._touched[key] = cached
            if cached[1] < self._read_since:
                self._read_since = cached[1]
            if cached[2] is not None:
                self._read_marked = True
            return cached[0]
        memo[key] = ({}, UNREAD, None)  # recursion guard
        outer, self._read_since = self._read_since, UNREAD
        out: dict = {}
        for atom in (atoms if len(atoms) == 1 else self._in_order(atoms)):
            if atom.tag == "J":
                # a projection, three atoms in four read here: eval_atom's first case written out, and
                # seen_through's test of a map it hands back as it is (nearly half are empty): calls fewer
                value = self.eval(atom.inner, mode)
                if value and atom.transform != IDENT:
                    value = self.seen_through(value, atom.transform)
            else:
                value = self.eval_atom(atom, mode)
            for k, entry in value.items():
                # merge(out, k, *entry), its common cases inline (``in`` and a subscript, not a call of out.get)
                if k in out:
                    old = out[k]
                    if not entry[0] <= old[0]:
                        out[k] = (old[0] | entry[0], old[1])
                elif len(out) < MAX_SOURCES:
                    out[k] = entry
                else:
                    merge(out, k, entry[0], entry[1])
        read_since = self._read_since
        self.memo[key] = made = (out, read_since, self._marking)
        if self._touched is not None:
            self._touched[key] = made
        if outer < read_since:
            self._read_since = outer
        return out

    def seen_through(self, value: dict, transform: str) -> dict:
        """``transformed(value, transform)`` of a map :meth:`eval` returned.
        Those maps are never changed once made (the memo hands the same map
        to every reader in a round), so the projection of one is made once:
        a projection of a shared set is read from every set that holds it."""
        if transform == IDENT or not value:
            return value
        key = (id(value), transform)
        projections = self._projections
        if key in projections:  # (``in`` and a subscript, not a call of get: a shared map is seen through often)
            known = projections[key]
            if known[0] is value:
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
        if tag == "P":
            return {param_slot(atom.index): (ALL_DIMS, ())}
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
        # the others read the tables as they stand in this step
        if self._step_tick < self._read_since:
            self._read_since = self._step_tick
        if tag == "R":
            return self._returned(atom, mode)
        if tag == "F":
            return read_as_stored(self._field_value(atom, mode))
        if tag == "A":
            return read_as_stored(self._attribute_value(atom, mode))
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
                    merge(out, k, dims, via, link)
        return out

    def global_value(self, module: str, name: str, mode: frozenset) -> dict:
        """A module global's value, memoised per round as :meth:`eval` is (with the earliest step it read)."""
        key = (module, name, mode)
        if key in self.globals:
            known = self.globals[key]  # the bookkeeping of a memo hit, as in eval
            if self._touched_globals is not None:
                self._touched_globals[key] = known
            if known[1] < self._read_since:
                self._read_since = known[1]
            if known[2] is not None:
                self._read_marked = True
            return known[0]
        if key in self._globals_busy:
            return {}
        ff = self.modules.get(module)
        atoms = ff.globals.get(name) if ff else None
        if not atoms:
            self.globals[key] = made = ({}, UNREAD, None)
            if self._touched_globals is not None:
                self._touched_globals[key] = made
            return {}
        self._globals_busy.add(key)
        outer, self._read_since = self._read_since, UNREAD
        value = self.concrete(self.eval(atoms, mode), None, mode)
        read_since = self._read_since
        self._globals_busy.discard(key)
        self.globals[key] = made = (value, read_since, self._marking)
        if self._touched_globals is not None:
            self._touched_globals[key] = made
        if outer < read_since:
            self._read_since = outer
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
        if self._step_tick < self._read_since:
            self._read_since = self._step_tick
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
