"""What a call's result and an attribute of an object read in the whole-tree
pass: the callee's return summary with its parameters bound to the call's
arguments, the field of the classes an object may be an instance of
(:class:`~cslint.analysis.fieldreads.FieldReads`, mixed in), and whether a
call raises on some ranks only.
Mixed into :class:`~cslint.analysis.program.Program`, which holds the tables
(``rets``, ``fields``) and ``eval``.
"""

from __future__ import annotations

import functools

from ..presets import ALL_DIMS
from .noneness import NONE_PART
from .presentreturns import WHOLE_PRESENT, is_present_index, present_index, present_part
from .atoms import (
    CONTENTS, DROP, EMPTY, IDENT, NONE_ARG, NONE_PARAM, OWN_ARG, OWN_PARAM, PIECE_PICK, SHAPE, SPREAD_OWN, STORED_OWN,
    base_field, entry_base, field_name, param, project, source, unpicked,
)
from .callrefs import OWN_PART, call_offset, receiver_shift, ref_offset
from .fieldreads import FieldReads
from .divergence import merge, transformed
from .positions import POSITION_PARAM, parameter_of, passes_alike
from .spreads import element_argument, positional_argument
from .records import FuncFacts, Site, written_variants
from .vocabulary import VIEW_METHODS

#: the references of a method called on an object the whole-tree pass types (``x.name()``, ``self.attr.name()``)
_RECEIVER_METHODS = frozenset({"typed", "fieldmethod"})

@functools.lru_cache(maxsize=4096)
def collecting_position(params: tuple) -> int:
    """The index of the ``*args`` parameter among ``params`` (as
    ``FunctionInfo.params`` spells them), else -1."""
    for index, name in enumerate(params):
        if name[:1] == "*":
            return index if name[:2] != "**" else -1
    return -1


#: the references that may lead to a function of a file read for what it
#: raises alone: a name imported from another module (``pkg.mod.Name``), or
#: one of the file's own functions
CALLEE_REFS = frozenset({"qual", "func"})


def element_stored_fields(funcs, family_of) -> set:
    """(family, attr) of the fields some method stores an element into (a
    write of :func:`~cslint.analysis.atoms.own_field`)."""
    out: set = set()
    for fn in funcs:
        for v in written_variants(fn):
            for write in v.fields:
                base = base_field(write.attr)
                if base is not None:
                    out.add((family_of(write.class_key), base))
    return out


def entry_fields(funcs, family_of) -> set:
    """(family, attr) of the tables whose entry positions are read apart
    (``analysis/entries.py``): every class of the family that writes the
    field writes its positions too, so no store puts anything else in."""
    positions: dict = {}
    writers: dict = {}
    for fn in funcs:
        for v in written_variants(fn):
            for write in v.fields:
                base = entry_base(write.attr)
                family = family_of(write.class_key)
                if base is not None:  # (the stored values' own structure: a position of its own kind)
                    key = (family, write.attr) if write.attr.endswith(STORED_OWN) else (family, base)
                    positions.setdefault(key, set()).add(write.class_key)
                else:
                    writers.setdefault((family, field_name(write.attr)), set()).add(write.class_key)
    return {key for key, classes in positions.items() if writers.get((key[0], field_name(key[1])), set()) <= classes}


def _split_parts(variant) -> list:
    """(index, atoms) of each part of what ``variant`` returns kept apart:
    its elements by position, its own structure under ``OWN_PART``."""
    parts = variant.return_parts
    out = (list(zip(variant.return_keys, parts)) if variant.return_keys else list(enumerate(parts))) if parts else []
    if variant.return_own is not None:
        out.append((OWN_PART, variant.return_own))
    if variant.return_none is not None:
        out.append((NONE_PART, variant.return_none))
    present = variant.return_present
    if present is not None:
        if present[0] is not None:
            out.append((present_index(None), present[0]))
        out.extend((present_index(index), atoms) for index, atoms in enumerate(present[1] or ()))
    return out


def _keeps_part(variant, index) -> bool:
    """Whether ``variant`` keeps part ``index`` of its result apart (:meth:`ProgramReads._returned_part`)."""
    if index == OWN_PART:
        return variant.return_own is not None
    if index == NONE_PART:
        return variant.return_none is not None
    if is_present_index(index):  # where the caller found it not None (presentreturns)
        return present_part(variant, index) is not None
    if type(index) is str or type(index) is tuple:  # a key, or its value's own structure (shapes.key_own)
        return bool(variant.return_keys) and index in variant.return_keys
    return bool(variant.return_parts) and not variant.return_keys and index < len(variant.return_parts)


class ProgramReads(FieldReads):
    """Reads of call results and attributes over the program's tables."""

    def _record_returns(self, fn, v, mode: frozenset) -> bool:
        """Merge what the variant ``v`` of ``fn`` returns, whole and by
        position (only for a function some caller reads an element of, see
        :meth:`_returned_part`), into the tables; whether some entry
        changed."""
        changed = False
        if not v.returns and not v.return_own:
            return changed
        tables = [(self.rets.setdefault((fn.key, mode), {}), v.returns)]
        if (fn.key, mode) in self.split_returns:
            for index, atoms in _split_parts(v):
                tables.append((self.ret_parts.setdefault((fn.key, mode, index), {}), atoms))
        for table, atoms in tables:
            for k, (dims, via) in self.eval(atoms, mode).items():
                if merge(table, k, dims, via):
                    changed = True
                    self.changed_keys.add(("ret", fn.key))
        return changed

    def _returned_part(self, fn, mode: frozenset, index: int):
        """Element ``index`` of what ``fn`` returns (parameters symbolic), or
        None where its returns do not all write out a tuple that long (for a
        string ``index``, a dict display with that key: ``Variant.return_keys``); for
        ``OWN_PART``, its own structure (``Variant.return_own``), or None
        where that is not kept apart.  Most functions that return a tuple are
        never unpacked by a caller the analysis resolves, so the tables by
        position are kept only for those that are: the first read fills them
        from the function's returns as they stand, and from then on each step
        of the function updates them beside its whole result
        (:meth:`_record_returns`)."""
        variant = self.variant(fn, mode)
        if variant is None or not _keeps_part(variant, index):
            return None
        if (fn.key, mode) not in self.split_returns:
            self.split_returns.add((fn.key, mode))
            for position, atoms in _split_parts(variant):
                table = self.ret_parts[(fn.key, mode, position)] = {}
                for k, (dims, via) in self.eval(atoms, mode).items():
                    merge(table, k, dims, via)
        return self.ret_parts.get((fn.key, mode, index), {})

    def _returned(self, atom, mode: frozenset) -> dict:
        """What the call ``atom`` returns, its parameters bound to the
        arguments; one element of it for a :class:`~cslint.analysis.callrefs.PartRef`
        (of a callee whose returns all write out a tuple long enough)."""
        ref = atom.ref
        index = None
        if ref.tag == "part":
            index, ref = ref.index, ref.ref
        targets = self.resolver.resolve(ref)
        if index == PIECE_PICK:  # the element an index picks: of one kind where every callee cuts pieces
            if not targets and ref.tag == "qual":
                targets = self.resolver.function_under_package(ref.dotted) or self.summarised_callees(ref)
            pieces = targets and all(fn.returns_pieces for fn in targets)
            return self.eval(atom.args[0] if pieces else atom.fallback, mode)
        summarised_only = False
        if not targets and (index is None or index == WHOLE_PRESENT or index == NONE_PART):
            # (what it holds where it is not None; whether it is None: the whole result of a summarised callee)
            targets = self.summarised_callees(ref)
            summarised_only = bool(targets)
        if not targets:
            return self.eval(atom.fallback, mode)
        out: dict = {}
        link = None
        if ref.tag == "class" or any(fn.qualname.endswith("__init__") for fn in targets):
            # a new object of a class of the tree: never None, of that class,
            # whatever it was built with; what it was built with is its
            # contents (its fields are read from the class).  An object that
            # shows nothing but its attributes (no truth, length, equality or
            # call of its own) is truthy and equal only to itself on every
            # rank: what it was built with reaches a reader through its
            # fields alone
            holders = set(self.resolver.built_classes(ref)) or {fn.class_key for fn in targets}
            plain = all(key is not None and self.resolver.holds_only_fields(key) for key in holders)
            return self.seen_through(self.eval(atom.fallback, mode), DROP if plain else CONTENTS)
        for fn in targets:
            offset_for_call = ref_offset(ref, fn)
            ret = None
            if index is not None and not summarised_only:
                ret = self._returned_part(fn, mode, index)
                if ret is None and type(index) is tuple and index[1] is not None:  # the whole value under the key
                    ret = self._returned_part(fn, mode, index[1])  # (or the element) where nothing is kept apart
                elif ret is None and index == NONE_PART:  # whether it is None: its own structure, else whole
                    ret = self._returned_part(fn, mode, OWN_PART)
            if ret is None:
                ret = self._callee_returns(fn, mode, not atom.args and not atom.kwargs) if summarised_only \
                    else self.rets.get((fn.key, mode), {})
            for k, (dims, via) in ret.items():
                if k.tag == "PARAM":
                    arg_atoms = self.arg_for_param(fn, k.index, atom.args, atom.kwargs, offset_for_call)
                    if arg_atoms is None:
                        continue
                    for k2, (d2, v2) in self.seen_through(self.eval(arg_atoms, mode), k.transform).items():
                        d = d2 & dims
                        if d:
                            merge(out, k2, d, v2)
                else:
                    if k.tag == "S" and k.picks_from:  # (read only as the index of a pick from a parameter)
                        if k.picks_from[0] == fn.key and passes_alike(fn, k.picks_from[1], atom.alike_displays,
                                                                      offset_for_call):
                            continue  # the caller's display holds one value: the same element on every rank
                        k = unpicked(k)
                    if link is None:  # the same link for every entry: made once per call
                        link = (atom.path, atom.line, f"returned by `{atom.text}()`")
                        self.link_functions[link] = ("return", tuple(target.key for target in targets),
                                                     f"{atom.text}()")
                    merge(out, k, dims, via, link)
        return out

    def summarised_callees(self, ref) -> list:
        """The module-level functions of the files read only for their
        summaries (:attr:`callees`) that a call through ``ref`` runs, where
        it runs none of the program's: a helper in a file with nothing that
        can reach a collective (``pg_utils.is_parallel(group)``) whose result
        decides one.  A class's constructor is left out (what a new object
        holds is read from its class, which such a file does not give)."""
        if self.callees is None or ref.tag not in CALLEE_REFS:
            return []
        return [fn for fn in self.callees.resolve(ref) if fn.class_key is None]

    def _callee_returns(self, fn: FuncFacts, mode: frozenset, argument_free: bool = False) -> dict:
        """What a function of :attr:`callees` returns of its parameters, left
        symbolic: the parts of its summary's returns its arguments reach,
        evaluated where read (no step of the fixpoint records them in
        :attr:`rets`).  What it reads itself -- a file, the environment, a
        group it asks for its rank beside its size in one tuple -- stays
        unknown, as for any call of code no round parsed: the program's
        tables, which keep such reads apart (a tuple's elements, a
        configuration file every rank reads), do not hold its callees.  So a
        call of it reads at most what its arguments bring, never more than
        the call read when its callee was unknown -- except a call with no
        arguments at all (``argument_free``: ``if ids.my_rank() > 0:``), which
        has nothing to bring, where the sources the returns name themselves
        (a rank id the helper reads) come back too."""
        variant = self.variant(fn, mode)
        if variant is None or not variant.returns:
            return {}
        return {k: entry for k, entry in self.eval(variant.returns, mode).items()
                if k.tag == "PARAM" or argument_free and k.tag == "S"}

    def _pass_to_callee(self, fn: FuncFacts, site: Site, mode: frozenset) -> bool:
        """A call that runs none of the program's functions passes its
        arguments to the function it runs among those read for what they
        raise (:attr:`callees`), if it raises at all: whether it raises may
        follow them.  Whether some entry changed."""
        changed = False
        for target in self.callees.resolve(site.ref):
            offset = call_offset(site, target)
            if target.raises and self._pass_arguments(fn, site, target, offset, mode):
                changed = True
        return changed

    def raising_targets(self, ref) -> list:
        """The functions a call through ``ref`` may run, for what they raise:
        the program's, or else those of the files read for that alone
        (``callees``: files where no function can reach a collective, which
        no prefilter round chose).  A call to one of those raises as the
        tests above its ``raise`` statements say, its parameters bound to
        what the program's calls pass (:meth:`_pass_to_callee`); beside
        that only a module-level function's returns are read
        (:meth:`_callee_returns`): their fields and calls stay unknown."""
        targets = self.resolver.resolve(ref)
        if not targets and self.callees is not None and ref.tag in CALLEE_REFS:
            targets = self.callees.resolve(ref)
        return targets

    def _raised_by(self, atom, mode: frozenset) -> dict:
        """Whether a call to an analysed function (or one read for what it raises, :meth:`raising_targets`)
        raises on some ranks only: never when it has no ``raise``, or is a library tensor's view; as the tests
        above its raises (and what a re-raised exception came from) differ, when its summary worked them out
        and it does no local I/O; else on any rank."""
        targets = self.raising_targets(atom.ref)
        if not targets and atom.ref.tag in _RECEIVER_METHODS and atom.ref.name in VIEW_METHODS:
            return {}  # no method of the tree answers: a tensor's view or shape read (raises.views_a_tensor)
        raising = [fn for fn in targets if fn.raises]
        if (targets or atom.tag == "T") and not raising:
            return {}  # (no library code raises an exception of a class the tree defines)
        out: dict = {}
        for fn in raising:
            variant = self.variant(fn, mode)
            if variant is None:
                break
            if atom.tag == "T" and variant.raised_tree is not None:
                decided = variant.raised_tree  # an exception of a class the tree defines (raises.py)
            elif fn.local_io or variant.raised is None:
                break
            else:
                decided = variant.raised
            link = (atom.path, atom.line, f"`{atom.text}` raises when this holds")
            for k, (dims, via) in self.concrete(self.eval(decided, mode), fn, mode).items():
                merge(out, k, dims, via, link)
        else:
            if targets:
                return out
        origin = source("exception from local work", atom.text, atom.path, atom.line, (("*", ALL_DIMS),))
        return {origin: (ALL_DIMS, ())}

    def _escaped_by(self, atom, mode: frozenset) -> dict:
        """Whether a call fails on some ranks only with an error nothing
        catches (``unhandled-exceptions = "hang"``): as the tests above its
        callee's local work differ; never where the callee's walk did not
        work them out."""
        out: dict = {}
        link = (atom.path, atom.line, f"`{atom.text}` fails on the ranks where this holds")
        for fn in self.resolver.resolve(atom.ref):
            variant = self.variant(fn, mode)
            if variant is None or not variant.escapes:
                continue
            for k, (dims, via) in self.concrete(self.eval(variant.escapes, mode), fn, mode).items():
                merge(out, k, dims, via, link)
        return out

    def _pass_arguments(self, fn: FuncFacts, site: Site, target: FuncFacts, offset: int, mode: frozenset) -> bool:
        """Merge what the call ``site`` of ``fn`` passes into the parameter
        tables of ``target`` (``offset``: 1 where the call does not pass the
        instance); whether some entry changed."""
        changed = False
        own = target.own_params
        for index in range(len(target.params)) if not own else \
                [*[i if i >= POSITION_PARAM else OWN_PARAM + i for i in own], *range(len(target.params))]:
            table = value = None
            if index >= OWN_PARAM:
                # a parameter's part (its own, one at a position) has a table of its own only once some call keeps
                # that part of the argument apart, differing from the whole (a relay of the caller's parameter mostly
                # does not): until then the parameter's table stands for it (Program.concrete), and the new table
                # starts as a copy of it
                table = self.params.get((target.key, index, mode))
                if table is None and index - OWN_PARAM == collecting_position(target.params):
                    # every call passes a ``*args`` parameter's own part apart
                    # (as many arguments as it writes out): never the whole's
                    table = self.params[(target.key, index, mode)] = {}
                    changed = True
                    self.changed_keys.add(("param", target.key))
                if table is None:
                    kept = self.arg_for_param(target, index, site.args, site.kwargs, offset, True)
                    if kept is None:
                        continue
                    base, seen = parameter_of(index), IDENT if index >= POSITION_PARAM else SHAPE
                    whole = self.arg_for_param(target, base, site.args, site.kwargs, offset)
                    if whole and self._relayed(fn, kept, whole, mode):
                        continue
                    value = self.concrete(self.eval(kept, mode), fn, mode) if kept else {}
                    if value == (transformed(self.concrete(self.eval(whole, mode), fn, mode), seen) if whole else {}):
                        continue
                    table = self.params[(target.key, index, mode)] = dict(
                        transformed(self.params.get((target.key, base, mode), {}), seen))
                    changed = True
                    self.changed_keys.add(("param", target.key))
            if value is None:
                arg = self.arg_for_param(target, index, site.args, site.kwargs, offset)
                value = self.concrete(self.eval(arg, mode), fn, mode) if arg else None
            if not value:
                continue
            if table is None:
                table = self.params.setdefault((target.key, index, mode), {})
            name = target.params[parameter_of(index)]
            link = (fn.path, site.span.line, f"passed as `{name}` to `{target.qualname}` in `{fn.qualname}`")
            self.link_functions[link] = ("param", (target.key,), name)
            for k, (dims, via) in value.items():
                if merge(table, k, dims, via, link):
                    changed = True
                    self.changed_keys.add(("param", target.key))
        return changed


    def _relayed(self, fn: FuncFacts, kept: frozenset, whole: frozenset, mode) -> bool:
        """Whether ``kept``, the own part a call of ``fn`` passes, is ``whole``
        with the parameters of ``fn`` read as their own parts, none of which
        has a table of its own: then it is the whole argument."""
        if len(kept) != len(whole):
            return False
        for atom in kept:
            if atom.tag == "P" and atom.index >= OWN_PARAM:
                if (fn.key, atom.index, mode) in self.params or param(parameter_of(atom.index)) not in whole:
                    return False
            elif atom not in whole:
                return False
        return True

    def arg_for_param(self, fn: FuncFacts, index: int, args: tuple, kwargs: tuple, offset: int, kept: bool = False):
        """The atoms a call passes for parameter ``index`` of ``fn`` (by keyword, else by position; ``offset``: 1
        where the call does not pass the instance), or None where it passes nothing there.  For a parameter's own
        part (``OWN_PARAM + index``), what the call keeps apart of that argument (``OWN_ARG``), else the whole
        argument's structure (``SHAPE``; None with ``kept``); for its part at a position, the display's element
        passed there (``positions.position_argument``), else the whole argument (None with ``kept``)."""
        if index >= POSITION_PARAM:
            passed = element_argument(fn, index, args, kwargs, offset)  # (a display's, or of ``*args``: spreads.py)
            return passed if passed is not None or kept else self.arg_for_param(fn, parameter_of(index), args, kwargs, offset)
        if index >= NONE_PARAM:  # whether it is None: what the call passes apart, else the own part
            position = index - NONE_PARAM
            if kwargs:
                keys = (NONE_ARG + fn.params[position] if position < len(fn.params) else None,
                        NONE_ARG + str(position - receiver_shift(fn, offset)))
                for kw, atoms in kwargs:
                    if kw in keys:
                        return atoms
            return self.arg_for_param(fn, OWN_PARAM + position, args, kwargs, offset, kept)
        if index >= OWN_PARAM:
            index -= OWN_PARAM
            if index == collecting_position(fn.params):
                # a ``*args`` parameter is a tuple as long as the positional
                # arguments from its position on: the same on every rank,
                # unless the call spreads a sequence into them
                for kw, atoms in kwargs:
                    if kw == SPREAD_OWN:
                        return atoms
                return EMPTY
            if kwargs:
                keys = (OWN_ARG + fn.params[index] if index < len(fn.params) else None,
                        OWN_ARG + str(index - receiver_shift(fn, offset)))
                for kw, atoms in kwargs:
                    if kw in keys:
                        return atoms
            if kept:
                return None
            whole = self.arg_for_param(fn, index, args, kwargs, offset)
            return None if whole is None else project(SHAPE, whole)
        if index >= len(fn.params):
            return None
        name = fn.params[index]
        spreads = False  # (a spread's keyword starts with ``*``: spreads.SPREAD_FROM, SPREAD_MAPPING, OTHER_MAPPING)
        for kw, atoms in kwargs:
            if kw == name:
                return atoms
            spreads = spreads or kw[:1] == "*"
        # (callrefs.receiver_shift written out: asked for nearly every argument the pass binds, a call each cost 0.4 %)
        position = index - (fn.self_offset if offset else 0)
        if not spreads and name[:1] != "*":  # (the commonest call; spreads.py: any)
            collecting = collecting_position(fn.params)  # (a keyword-only parameter past ``*args``: no positional)
            return args[position] if 0 <= position < len(args) and (collecting < 0 or index < collecting) else None
        return positional_argument(fn.params, index, position, collecting_position(fn.params), args, kwargs)
