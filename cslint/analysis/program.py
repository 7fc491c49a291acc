"""The whole-tree analysis: interprocedural fixpoint, uniformity, hazards.

Input: the :class:`~cslint.analysis.facts.FileFacts` of every analysed file.
Output: :class:`Hazard` records (a collective, or a call that reaches one,
whose execution depends on a condition that may differ between ranks of the
collective's group).  Rules turn hazards into findings; nothing here knows
about codes, messages or output formats.

Values are evaluated to a *divergence map*: rank-local source -> (the
dimensions it still differs along, the flow links it travelled).  Parameters
are kept symbolic (``('PARAM', i)``) inside return summaries so a wrapper's
result depends on what each caller passes; elsewhere a parameter is divergent
when some call site passes a divergent argument (context-insensitive).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import NamedTuple, Optional

from ..presets import ALL_DIMS, KIND_DATA_SHARD, KIND_FILESYSTEM, Knowledge, group_span
from .atoms import THROUGH_INSTANCE, Source, name_ref, source
from .callfacts import translate
from .records import Cond, FuncFacts, Site

MAX_ROUNDS = 40
MAX_VIA = 4


EMPTY_ATOMS: frozenset = frozenset()

#: Source kinds whose values differ between ranks while their length does
#: not: a sampler that shards by rank pads (or drops) to the same number of
#: batches everywhere, so a loop over it runs equally often on every rank.
SAME_LENGTH_KINDS = frozenset({KIND_DATA_SHARD})

#: Source kinds that count where they decide a collective directly, but do
#: not make everything a callee assigns divergent when they decide the call:
#: a script that converts a checkpoint only if the file exists constructs its
#: communicator wrapper under that test without any rank skipping anything.
DIRECT_ONLY_KINDS = frozenset({KIND_FILESYSTEM})


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
    via: tuple  # ((path, line, note), ...) flows from the source to the condition
    modes: tuple = ()  # mode names the hazard needs (empty: in every configuration)
    region_collectives: int = 1
    direct: bool = True
    #: the collective's fix facts (CallFacts) as seen from this function:
    #: its communicator and group argument named the way this function can
    collective_facts: Optional[tuple] = None


# A divergence map keeps every source until it holds this many; past that a
# new source is kept only if it makes a dimension divergent that none of the
# kept ones does.  The dimensions of the map (what decides a hazard) stay
# exact, because every operation on maps (union, a group collective removing
# its dimensions, narrowing to what a parameter carries) works dimension by
# dimension; only the list of alternative explanations is cut.  Without the
# cap, tables on large trees collected hundreds of sources each and the
# fixpoint crawled through one new source per round.
MAX_SOURCES = 4


class ParamSlot(NamedTuple):
    """A divergence-map key standing for whatever callers pass as the
    parameter at ``index`` (return summaries keep parameters symbolic)."""

    tag: str  # "PARAM"
    index: int


def param_slot(index: int) -> ParamSlot:
    return ParamSlot("PARAM", index)


def _merge(target: dict, key, dims: frozenset, via: tuple) -> bool:
    old = target.get(key)
    if old is None:
        if len(target) >= MAX_SOURCES and key.tag != "PARAM":
            covered = frozenset().union(*(d for k, (d, _v) in target.items() if k.tag != "PARAM"))
            if dims <= covered:
                return False
        target[key] = (dims, via)
        return True
    old_dims, old_via = old
    if dims <= old_dims:
        return False
    target[key] = (old_dims | dims, old_via)
    return True


class Program:
    """Resolve names across the tree and solve the summaries to a fixpoint."""

    def __init__(self, files: list, knowledge: Knowledge):
        self.knowledge = knowledge
        self.files = [f for f in files if f.error is None]
        self.modes = knowledge.mode_assignments() if knowledge.modes else [frozenset()]
        self.funcs: dict = {}
        self.classes: dict = {}
        self.modules: dict = {}
        self.funcs_by_qual: dict = {}
        self.classes_by_qual: dict = {}
        self.methods_by_name: dict = {}
        for ff in self.files:
            self.modules[ff.module] = ff
            for fn in ff.functions:
                self.funcs[fn.key] = fn
                self.funcs_by_qual[f"{fn.module}.{fn.qualname}"] = fn
            for cls in ff.classes:
                self.classes[cls.key] = cls
                self.classes_by_qual[f"{cls.module}.{cls.key.split(':', 1)[1]}"] = cls
                for name, fkey in cls.methods.items():
                    self.methods_by_name.setdefault(name, []).append(fkey)
        self._bases: dict = {}
        self._subclasses: dict = {}
        for cls in self.classes.values():
            resolved = []
            for ref in cls.bases:
                base = self._class_of_ref(ref)
                if base is not None:
                    resolved.append(base.key)
                    self._subclasses.setdefault(base.key, []).append(cls.key)
            self._bases[cls.key] = resolved
        self._family = {}
        for key in self.classes:
            self._family[key] = self._find_family(key)
        self.field_types: dict = {}
        for fn in self.funcs.values():
            for variant in fn.variants.values():
                for class_key, attr, ref in variant.field_types:
                    cls = self._class_of_ref(ref)
                    if cls is not None:
                        self.field_types.setdefault((self.family(class_key), attr), set()).add(cls.key)
        self._resolve_cache: dict = {}
        # fixpoint tables
        self.rets: dict = {}  # (fkey, mode) -> divergence map (may hold PARAM keys)
        self.fields: dict = {}  # (family, attr, mode) -> divergence map
        self.params: dict = {}  # (fkey, index, mode) -> divergence map
        self.ctx: dict = {}  # (fkey, mode) -> divergence of the conditions under which callers call it
        self.reach: dict = {}  # (fkey, mode) -> {(name, group): (api, chain, CallFacts as seen from fkey)}
        self.globals: dict = {}  # (module, name, mode) -> divergence map
        self.memo: dict = {}
        self._ordered: dict = {}  # atom set -> its atoms in canonical order
        self._digests: dict = {}  # see structure_digest
        self._globals_busy: set = set()
        self.changed_keys: set = set()
        self._seed_signal_handler_fields()

    def _seed_signal_handler_fields(self) -> None:
        """Fields a signal handler assigns differ between ranks: the signal
        reaches one process (a SIGTERM from a node's scheduler, a Ctrl-C)."""
        for fn in self.funcs.values():
            for ref in fn.signal_handlers:
                for handler in self.resolve(ref):
                    for v in handler.variants.values():
                        for write in v.fields:
                            origin = source("set by a signal handler", f"self.{write.attr}", handler.path,
                                            write.line, (("*", ALL_DIMS),))
                            for mode in self.modes:
                                table = self.fields.setdefault((self.family(write.class_key), write.attr, mode), {})
                                _merge(table, origin, ALL_DIMS, ())

    # -- classes -----------------------------------------------------------------
    def _lookup_qual(self, table: dict, dotted: str, depth: int = 0):
        found = table.get(dotted)
        if found is not None or depth > 3 or "." not in dotted:
            return found
        # re-exports: `pkg.Name` where pkg/__init__ imports Name from elsewhere
        module, _, name = dotted.rpartition(".")
        for split in range(dotted.count("."), 0, -1):
            parts = dotted.split(".")
            mod = ".".join(parts[:split])
            rest = parts[split:]
            ff = self.modules.get(mod)
            if ff is not None and rest and rest[0] in ff.imports:
                target = ".".join([ff.imports[rest[0]]] + rest[1:])
                if target != dotted:
                    return self._lookup_qual(table, target, depth + 1)
        return None

    def _class_of_ref(self, ref):
        if ref is None:
            return None
        if ref.tag == "class":
            return self.classes.get(ref.key)
        if ref.tag == "qual":
            return self._lookup_qual(self.classes_by_qual, ref.dotted)
        return None

    def _find_family(self, key: str) -> str:
        seen = set()
        stack = [key]
        root = key
        while stack:
            k = stack.pop()
            if k in seen:
                continue
            seen.add(k)
            root = min(root, k)
            stack.extend(self._bases.get(k, ()))
        # the family is named by its smallest root-most member; subclasses
        # join the family of their bases
        roots = [k for k in seen if not self._bases.get(k)]
        return min(roots) if roots else root

    def family(self, class_key: Optional[str]) -> Optional[str]:
        if class_key is None:
            return None
        return self._family.get(class_key, class_key)

    def mro(self, class_key: str) -> list:
        out, seen = [], set()
        stack = [class_key]
        while stack:
            k = stack.pop(0)
            if k in seen:
                continue
            seen.add(k)
            out.append(k)
            stack.extend(self._bases.get(k, ()))
        return out

    def lookup_method(self, class_key: str, name: str, include_overrides: bool = True) -> list:
        found = []
        for k in self.mro(class_key):
            cls = self.classes.get(k)
            if cls is not None and name in cls.methods:
                fkey = cls.methods[name]
                if fkey in self.funcs:
                    found.append(self.funcs[fkey])
                break
        if include_overrides:
            stack = list(self._subclasses.get(class_key, ()))
            seen = set()
            while stack:
                k = stack.pop()
                if k in seen:
                    continue
                seen.add(k)
                cls = self.classes.get(k)
                if cls is not None and name in cls.methods and cls.methods[name] in self.funcs:
                    fn = self.funcs[cls.methods[name]]
                    if fn not in found:
                        found.append(fn)
                stack.extend(self._subclasses.get(k, ()))
        return found

    def resolve(self, ref) -> list:
        if ref is None:
            return []
        try:
            return self._resolve_cache[ref]
        except KeyError:
            pass
        except TypeError:  # unhashable (should not happen)
            return []
        out: list = []
        tag = ref.tag
        if tag == "func":
            fn = self.funcs.get(f"{ref.module}:{ref.qualname}")
            out = [fn] if fn else []
        elif tag == "qual":
            fn = self._lookup_qual(self.funcs_by_qual, ref.dotted)
            out = [fn] if fn else []
            if not out:
                cls = self._lookup_qual(self.classes_by_qual, ref.dotted)
                if cls is not None:
                    out = self.lookup_method(cls.key, "__init__", include_overrides=False)
        elif tag == "method":
            out = self.lookup_method(ref.class_key, ref.name)
        elif tag == "super":
            for base in self._bases.get(ref.class_key, ()):
                out = self.lookup_method(base, ref.name, include_overrides=False)
                if out:
                    break
        elif tag == "fieldmethod":
            types = self.field_types.get((self.family(ref.class_key), ref.attr), ())
            for cls_key in sorted(types):
                for fn in self.lookup_method(cls_key, ref.name):
                    if fn not in out:
                        out.append(fn)
            if not types:
                out = self.resolve(name_ref(ref.name))
        elif tag == "class":
            out = self.lookup_method(ref.key, "__init__", include_overrides=False)
        elif tag == "name":
            candidates = self.methods_by_name.get(ref.name, [])
            if len(candidates) == 1 and candidates[0] in self.funcs:
                out = [self.funcs[candidates[0]]]
        self._resolve_cache[ref] = out
        return out

    # -- values --------------------------------------------------------------------
    def variant(self, fn: FuncFacts, mode: frozenset):
        v = fn.variants.get(None)
        if v is None:
            v = fn.variants.get(mode)
        return v

    def eval(self, atoms: frozenset, mode: frozenset) -> dict:
        if not atoms:
            return {}
        key = (atoms, mode)
        cached = self.memo.get(key)
        if cached is not None:
            return cached
        self.memo[key] = {}  # recursion guard
        out: dict = {}
        for atom in (atoms if len(atoms) == 1 else self._in_order(atoms)):
            for k, (dims, via) in self.eval_atom(atom, mode).items():
                _merge(out, k, dims, via)
        self.memo[key] = out
        return out

    def _in_order(self, atoms: frozenset) -> tuple:
        """``atoms`` in a canonical order.  A divergence map keeps the first
        explanation it is given and stops taking sources past its cap, so the
        order atoms are evaluated in picks the sources and flows a finding
        cites; a frozenset's own order follows the hash seed and how the set
        was built (a set unpickled from a worker iterates differently)."""
        found = self._ordered.get(atoms)
        if found is None:
            found = self._ordered[atoms] = canonical_order(atoms, self._digests)
        return found

    def eval_atom(self, atom: tuple, mode: frozenset) -> dict:
        tag = atom.tag
        if tag == "S":
            dims = _dims_in(atom.dims, mode)
            return {atom: (dims, ())} if dims else {}
        if tag == "P":
            return {param_slot(atom.index): (ALL_DIMS, ())}
        if tag == "F":
            return self.fields.get((self.family(atom.class_key), atom.attr, mode), {})
        if tag == "G":
            return self.global_value(atom.module, atom.name, mode)
        if tag == "C":
            span = group_span(atom.group)
            out = {}
            for k, (dims, via) in self.eval(atom.inner, mode).items():
                rest = dims - span
                if rest:
                    out[k] = (rest, via)
            return out
        if tag == "E":
            targets = self.resolve(atom.ref)
            if targets and not any(fn.raises for fn in targets):
                return {}
            origin = source("exception from local work", atom.text, atom.path, atom.line, (("*", ALL_DIMS),))
            return {origin: (ALL_DIMS, ())}
        if tag == "R":
            ref = atom.ref
            targets = self.resolve(ref)
            if not targets:
                return self.eval(atom.fallback, mode)
            out: dict = {}
            offset_for_call = 1 if ref.tag in THROUGH_INSTANCE else 0
            if ref.tag == "class" or any(fn.qualname.endswith("__init__") for fn in targets):
                return self.eval(atom.fallback, mode)
            for fn in targets:
                ret = self.rets.get((fn.key, mode), {})
                for k, (dims, via) in ret.items():
                    if k.tag == "PARAM":
                        arg_atoms = self._arg_for_param(fn, k.index, atom.args, atom.kwargs, offset_for_call)
                        if arg_atoms is None:
                            continue
                        for k2, (d2, v2) in self.eval(arg_atoms, mode).items():
                            d = d2 & dims
                            if d:
                                _merge(out, k2, d, v2)
                    else:
                        link = (atom.path, atom.line, f"returned by `{atom.text}()`")
                        _merge(out, k, dims, _via(via, link))
            return out
        return {}

    def _arg_for_param(self, fn: FuncFacts, index: int, args: tuple, kwargs: tuple, offset: int):
        if index < len(fn.params):
            name = fn.params[index]
            for kw, atoms in kwargs:
                if kw == name:
                    return atoms
        position = index - (fn.self_offset if offset else 0)
        if 0 <= position < len(args):
            return args[position]
        return None

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
        """Replace symbolic parameters by what callers pass."""
        if not any(k.tag == "PARAM" for k in value):
            return value
        out: dict = {}
        for k, (dims, via) in value.items():
            if k.tag != "PARAM":
                _merge(out, k, dims, via)
                continue
            if fn is None:
                continue
            for k2, (d2, v2) in self.params.get((fn.key, k.index, mode), {}).items():
                d = d2 & dims
                if d:
                    _merge(out, k2, d, v2)
        return out

    # -- fixpoint --------------------------------------------------------------------
    def solve(self) -> None:
        """Semi-naive fixpoint: a function is re-evaluated only when a table
        entry it reads (its parameters, the fields, returns and collective
        reach it refers to) changed in the previous round."""
        funcs = list(self.funcs.values())
        deps = {fn.key: self._dependencies(fn) for fn in funcs}
        self.changed_keys = set()
        dirty = None
        for _round in range(MAX_ROUNDS):
            self.memo = {}
            self.globals = {}
            self.changed_keys = set()
            for fn in funcs:
                if dirty is not None:
                    needs = deps[fn.key]
                    if "*" not in needs and not (needs & dirty):
                        continue
                for mode in self.modes:
                    v = self.variant(fn, mode)
                    if v is None:
                        continue
                    self._step(fn, v, mode)
            if not self.changed_keys:
                break
            dirty = self.changed_keys

    def _dependencies(self, fn: FuncFacts) -> set:
        out = {("param", fn.key)}
        seen = set()

        def atoms_deps(atoms):
            for atom in atoms:
                tag = atom.tag
                if tag == "F":
                    out.add(("field", self.family(atom.class_key), atom.attr))
                elif tag == "G":
                    # a module-level value depends on what its own atoms read
                    key = ("G", atom.module, atom.name)
                    if key in seen:
                        continue
                    seen.add(key)
                    module = self.modules.get(atom.module)
                    atoms_deps((module.globals.get(atom.name) if module else None) or ())
                elif tag == "R":
                    key = id(atom)
                    if key in seen:
                        continue
                    seen.add(key)
                    for target in self.resolve(atom.ref):
                        out.add(("ret", target.key))
                    for arg in atom.args:
                        atoms_deps(arg)
                    for _, arg in atom.kwargs:
                        atoms_deps(arg)
                    atoms_deps(atom.fallback)
                elif tag == "C":
                    # Collective-result atoms nest (a loop re-reads its own
                    # allreduce): the atom graph is a DAG with shared parts,
                    # so visit each one once or the walk is exponential.
                    key = id(atom)
                    if key in seen:
                        continue
                    seen.add(key)
                    atoms_deps(atom.inner)

        out.add(("ctx", fn.key))
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
                for target in self.resolve(site.ref) if site.ref is not None else ():
                    out.add(("reach", target.key))
        return out

    def _step(self, fn: FuncFacts, v, mode: frozenset) -> bool:
        changed = False
        if v.returns:
            table = self.rets.setdefault((fn.key, mode), {})
            for k, (dims, via) in self.eval(v.returns, mode).items():
                if _merge(table, k, dims, via):
                    changed = True
                    self.changed_keys.add(("ret", fn.key))
        calling_ctx = self.ctx.get((fn.key, mode), {})
        for class_key, attr, atoms, line in v.fields:  # FieldWrite
            if not atoms and not calling_ctx:
                continue
            value = dict(self.concrete(self.eval(atoms, mode), fn, mode)) if atoms else {}
            for k, entry in calling_ctx.items():
                value.setdefault(k, entry)
            if not value:
                continue
            table = self.fields.setdefault((self.family(class_key), attr, mode), {})
            link = (fn.path, line, f"`self.{attr}` is assigned from it in `{fn.qualname}`")
            for k, (dims, via) in value.items():
                if _merge(table, k, dims, _via(via, link)):
                    changed = True
                    self.changed_keys.add(("field", self.family(class_key), attr))
        reach = self.reach.setdefault((fn.key, mode), {})
        for site in v.sites:
            if site.collective is not None:
                name, group, api = site.collective
                if (name, group) not in reach:
                    reach[(name, group)] = (api, ((fn.path, site.span.line, f"`{site.callee}` is a collective over {group}"),),
                                            site.fix)
                    changed = True
                    self.changed_keys.add(("reach", fn.key))
            if site.ref is None:
                continue
            targets = self.resolve(site.ref)
            if not targets:
                continue
            site_ctx = getattr(site, "ctx_atoms", EMPTY_ATOMS)
            ctx_value = dict(self.concrete(self.eval(site_ctx, mode), fn, mode)) if site_ctx else {}
            for k, entry in calling_ctx.items():
                ctx_value.setdefault(k, entry)
            if ctx_value:
                ctx_value = {k: e for k, e in ctx_value.items() if not (k.tag == "S" and k.kind in DIRECT_ONLY_KINDS)}
            if ctx_value:
                link = (fn.path, site.span.line, f"`{site.callee}()` runs only on some ranks in `{fn.qualname}`")
                for target in targets:
                    table = self.ctx.setdefault((target.key, mode), {})
                    for k, (dims, via) in ctx_value.items():
                        if _merge(table, k, dims, _via(via, link)):
                            changed = True
                            self.changed_keys.add(("ctx", target.key))
            offset = 1 if site.ref.tag in THROUGH_INSTANCE or site.ref.tag == "class" else 0
            for target in targets:
                if target.qualname.endswith("__init__") and site.ref.tag == "qual":
                    offset = 1
                for index in range(len(target.params)):
                    arg = self._arg_for_param(target, index, site.args, site.kwargs, offset)
                    if not arg:
                        continue
                    value = self.concrete(self.eval(arg, mode), fn, mode)
                    if not value:
                        continue
                    table = self.params.setdefault((target.key, index, mode), {})
                    link = (fn.path, site.span.line,
                            f"passed as `{target.params[index]}` to `{target.qualname}` in `{fn.qualname}`")
                    for k, (dims, via) in value.items():
                        if _merge(table, k, dims, _via(via, link)):
                            changed = True
                            self.changed_keys.add(("param", target.key))
                for ckey, (api, chain, facts) in self.reach.get((target.key, mode), {}).items():
                    if ckey not in reach:
                        link = (fn.path, site.span.line, f"`{site.callee}()` calls `{target.qualname}`")
                        reach[ckey] = (api, (link,) + chain[:6], _seen_from(facts, site, target, fn))
                        changed = True
                        self.changed_keys.add(("reach", fn.key))
        return changed

    # -- hazards -------------------------------------------------------------------------
    def site_collectives(self, site: Site, mode: frozenset, fn=None) -> list:
        """Every collective a call site issues or reaches ([Reached]); their
        fix facts as the caller ``fn`` names them."""
        out = []
        if site.collective is not None:
            name, group, api = site.collective
            out.append(Reached(name, group, api, (), True, site.fix))
        if site.ref is not None:
            for target in self.resolve(site.ref):
                for (name, group), (api, chain, facts) in sorted(self.reach.get((target.key, mode), {}).items(),
                                                                 key=lambda item: item[0]):
                    link = (target.path, target.line, f"`{target.qualname}` issues a collective")
                    seen = _seen_from(facts, site, target, fn) if fn is not None else None
                    out.append(Reached(name, group, api, (link,) + chain, False, seen))
        return out

    def hazards(self) -> list:
        found: dict = {}
        for fn in self.funcs.values():
            for mode in self.modes:
                v = self.variant(fn, mode)
                if v is None:
                    continue
                for site in v.sites:
                    colls = self.site_collectives(site, mode, fn)
                    if not colls:
                        continue
                    hazard = self._site_hazard(fn, v, site, colls, mode)
                    if hazard is None:
                        continue
                    key = (fn.path, site.span.line, site.span.column, fn.key)
                    previous = found.get(key)
                    if previous is None:
                        found[key] = (hazard, [mode])
                    else:
                        _earlier, modes = previous
                        modes.append(mode)
        out = []
        for hazard, modes in found.values():
            if frozenset() in modes or not self.knowledge.modes:
                hazard.modes = ()
            else:
                common = frozenset.intersection(*modes)
                hazard.modes = tuple(sorted(common))
            out.append(hazard)
        out.sort(key=lambda h: (h.path, h.site.span.line, h.site.span.column))
        return out

    def _sequence(self, v, indices, mode) -> tuple:
        seq = []
        for index in indices:
            if index < len(v.sites):
                for reached in self.site_collectives(v.sites[index], mode):
                    seq.append((reached.name, reached.group))
        return tuple(seq)

    def _site_hazard(self, fn, v, site, colls, mode) -> Optional[Hazard]:
        for cond in site.conds:
            if not cond.atoms:
                continue
            if cond.two_sided and cond.alternatives:
                sequences = {self._sequence(v, alt, mode) for alt in cond.alternatives}
                if len(sequences) == 1 and next(iter(sequences)):
                    continue  # every rank issues the same collectives either way
            value = self.concrete(self.eval(cond.atoms, mode), fn, mode)
            if not value:
                continue
            for name, group, api, chain, direct, facts in colls:
                span = group_span(group)
                best = None
                for origin, (dims, via) in sorted(value.items(), key=_fewest_links_first):
                    if origin.tag != "S":
                        continue
                    if cond.kind == "loop" and origin.kind in SAME_LENGTH_KINDS:
                        continue  # the elements differ, their number does not
                    if dims & span:
                        best = (origin, dims, via)
                        break
                if best is None:
                    continue
                origin, dims, via = best
                region = len(cond.body_sites) + len(cond.else_sites) if cond.kind == "branch" else 0
                if not direct and facts is not None and (not facts.receiver or (
                        facts.receiver.startswith("self.") and not _own_field(facts.receiver))):
                    facts = self._own_receiver(fn, api, facts)
                return Hazard(cond.kind, fn.path, fn.qualname, site, cond, name, group, api, chain,
                              origin, dims, via, (), max(region, 1), direct, facts)
        return None

    def _own_receiver(self, fn, api: str, facts: tuple) -> tuple:
        """A collective reached through another object is agreed on best
        through the communicator the caller's class itself uses for that API
        (``self.dist``, rather than ``self.transceiver._dist``)."""
        table = self.__dict__.get("_receivers_by_family")
        if table is None:
            counts: dict = {}
            for other in self.funcs.values():
                family = self.family(other.class_key)
                if family is None:
                    continue
                for variant in other.variants.values():
                    for site in variant.sites:
                        if site.collective is not None and site.fix is not None and _own_field(site.fix.receiver):
                            key = (family, site.collective[2])
                            per = counts.setdefault(key, {})
                            per[site.fix.receiver] = per.get(site.fix.receiver, 0) + 1
            table = {key: min(per, key=lambda r: (-per[r], r)) for key, per in counts.items()}
            self._receivers_by_family = table
        own = table.get((self.family(fn.class_key), api))
        return facts._replace(receiver=own) if own else facts


def _own_field(receiver: str) -> bool:
    """``self.x``: a communicator the object holds itself."""
    return receiver.startswith("self.") and receiver.count(".") == 1


def _seen_from(facts, site: Site, target, fn):
    """A callee's collective facts as its caller ``fn`` can name them."""
    if facts is None or site.ref is None:
        return None
    return translate(facts, site.ref, target.module == fn.module)


def _fewest_links_first(entry) -> tuple:
    """Order of a divergence map's entries when one explains a hazard: the
    shortest flow first, ties broken by the source's own text and place
    (never by the order of the set of dimensions it carries, which follows
    the hash seed)."""
    origin, (_dims, via) = entry
    if origin.tag != "S":
        return (len(via), 0, repr(tuple(origin)))
    return (len(via), 1, origin.kind, origin.text, origin.path, origin.line, structure_digest(origin.dims, {}))


def _atom_rank(atom: tuple) -> tuple:
    """What usually tells atoms apart, made of strings and ints only."""
    tag = atom.tag
    if tag == "S":
        return (tag, atom.kind, atom.text, atom.path, atom.line)
    if tag == "R":
        return (tag, atom.path, atom.line, atom.text, atom.depth, repr(tuple(atom.ref)))
    if tag == "E":
        return (tag, atom.path, atom.line, atom.text, repr(tuple(atom.ref)))
    if tag == "C":
        return (tag, atom.group, "", atom.depth)
    return (tag,) + tuple(str(part) for part in atom[1:])


def canonical_order(atoms, digests: Optional[dict] = None) -> tuple:
    """The atoms sorted by :func:`_atom_rank`; atoms that share a rank (the
    same call on one line with other arguments, collectives over one group)
    are ordered by a digest of their whole structure."""
    ranked = sorted(atoms, key=_atom_rank)
    for first, second in zip(ranked, ranked[1:]):
        if _atom_rank(first) == _atom_rank(second):
            memo = {} if digests is None else digests
            return tuple(sorted(ranked, key=lambda atom: (_atom_rank(atom), structure_digest(atom, memo))))
    return tuple(ranked)


def structure_digest(value, memo: dict) -> bytes:
    """A digest of nested tuples and frozensets that does not depend on the
    iteration order of any set in them (the digests of a set's elements are
    sorted).  ``memo`` maps ``id(part)`` to ``(part, digest)``: atom sets
    share parts (a DAG), each is digested once, and keeping the part beside
    its digest keeps its id from being reused."""
    is_set = isinstance(value, frozenset)
    if is_set or isinstance(value, tuple):  # typed atoms and refs are tuples
        known = memo.get(id(value))
        if known is not None and known[0] is value:
            return known[1]
        parts = [structure_digest(item, memo) for item in value]
        if is_set:
            parts.sort()
        found = hashlib.blake2b((b"{" if is_set else b"(") + b"".join(parts), digest_size=12).digest()
        memo[id(value)] = (value, found)
        return found
    return hashlib.blake2b(repr(value).encode("utf-8", "surrogateescape"), digest_size=12).digest()


def _dims_in(spec: tuple, mode: frozenset) -> frozenset:
    table = dict(spec)
    for name in sorted(mode):
        if name in table:
            return table[name]
    if not mode and "" in table:
        return table[""]
    return table.get("*", frozenset())


def _via(via: tuple, link: tuple) -> tuple:
    if len(via) >= MAX_VIA:
        return via
    return via + (link,)


def analyze(files: list, knowledge: Knowledge) -> list:
    """All hazards of an analysed tree."""
    program = Program(files, knowledge)
    program.solve()
    return program.hazards()
