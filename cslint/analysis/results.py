"""Call and collective result atoms of one file, and how deep they nest
(:class:`AtomBuilder`, one per file's extraction)."""

from __future__ import annotations

from .atoms import (
    EMPTY, PIECE_PICK, AttributeRead, Projection, attribute, call_result, collective_result, made, project, start_file,
)



# -- nesting of call and collective results ------------------------------------

# Nesting limit for call/collective result atoms.  A loop such as
# ``x = f(x)`` would otherwise build ever deeper atoms; past the limit a call
# keeps its arguments bound to its callee's parameters, each flattened
# (:meth:`AtomBuilder.flatten`), so the whole-tree pass still reads only what
# the callee returns of them: an argument it never returns (a batch whose
# random token ids its size test does not read) stays out of its result.
MAX_NESTING = 3

# Levels of agreement helpers' calls (``bind`` in :meth:`AtomBuilder.call`)
# that a flattened argument keeps, each bound to its own arguments, flattened
# one level less (:meth:`AtomBuilder.flatten`); any other call inside, and one
# below those levels, becomes its callee's own result plus what its arguments
# depend on.  Polls agreed over one group and then another and then relayed,
# ``relay(agree_cp(agree_tp(draw(pollers))))``, stay agreed over both: with
# one level, the inner agreement became its own result beside its argument,
# and the raw draws reached the outer one as if agreed over ``cp`` only.  The
# atoms stay at most ``MAX_NESTING + 1`` deep, so a loop still settles.
BOUND_LEVELS = 2

#: the references whose calls keep their arguments bound only directly inside
#: the arguments of a call past the limit (``AtomBuilder._bound_outer``): a
#: function of another module, and a method through a field or a typed
#: receiver (``evaluator.receiver_of_tree``), resolved by the whole-tree pass
_BOUND_OUTER_ONLY = frozenset({"qual", "fieldmethod", "typed"})


def nesting(atoms: frozenset) -> int:
    """How deep the call and collective results of ``atoms`` nest (those
    under projections and attribute reads included)."""
    deepest = 0
    for atom in atoms:
        tag = atom.tag
        if tag == "R" or tag == "C":
            if atom.depth > deepest:
                deepest = atom.depth
        elif tag == "J" or tag == "A":
            inner = atom.inner
            if inner in _nested:
                depth = _nested[inner]
            else:
                if len(_nested) >= _NESTED_LIMIT:
                    _nested.clear()
                depth = _nested[inner] = nesting(inner)
            if depth > deepest:
                deepest = depth
    return deepest


#: :func:`nesting` of the sets projections and attribute reads wrap: those
#: atoms are shared (a set is read through many projections, each call's
#: arguments are measured again where they are passed on), so each inner set is
#: measured once; forgotten with the file's atoms (:class:`AtomBuilder`) and
#: past :data:`_NESTED_LIMIT` entries
_nested: dict = {}
_NESTED_LIMIT = 1 << 15


def _is_call(atom, own) -> bool:
    if atom.tag != "R" or atom.line != own[2] or atom.path != own[1]:
        return False
    ref = atom.ref
    return ref == own[0] or (ref.tag == "part" and ref.ref == own[0])


def _holds_call(atoms: frozenset, own, held: dict) -> bool:
    """Whether a result of the call site ``own`` (ref, path, line) is among
    ``atoms``, directly or under projections and attribute reads.  ``held``:
    the answers for the sets asked before about the same ``own`` (the sets
    nest as a DAG: each is opened once)."""
    if atoms in held:
        return held[atoms]
    found = False
    for atom in atoms:
        tag = atom.tag
        if tag == "R":
            if _is_call(atom, own):
                found = True
                break
        elif (tag == "J" or tag == "A") and _holds_call(atom.inner, own, held):
            found = True
            break
    held[atoms] = found
    return found


def _replace_call(atoms: frozenset, own, itself, held: dict, replaced: dict) -> frozenset:
    """``atoms`` with every result of the call site ``own`` replaced by
    ``itself`` (``held``: as :func:`_holds_call`'s; ``replaced``: set -> (that
    very set, its replacement), each set object rebuilt once)."""
    if not _holds_call(atoms, own, held):
        return atoms
    if atoms in replaced:
        known = replaced[atoms]
        if known[0] is atoms:  # (an equal set of other atoms is rebuilt of its own: the atoms stay its own)
            return known[1]
    out = set()
    for atom in atoms:
        tag = atom.tag
        if tag == "R" and _is_call(atom, own):
            out.add(itself)
        elif tag == "J":
            out.add(made(Projection, ("J", atom.transform, _replace_call(atom.inner, own, itself, held, replaced))))
        elif tag == "A":
            out.add(made(AttributeRead, ("A", _replace_call(atom.inner, own, itself, held, replaced), atom.attr)))
        else:
            out.add(atom)
    found = frozenset(out)
    replaced[atoms] = (atoms, found)
    return found


class AtomBuilder:
    """Builds the call and collective result atoms of one file.

    Atoms are shared between the sets that hold them (a loop re-reads its
    own call results, every evaluation unions its parts anew), so the nested
    structure is a DAG: flattening each atom once (a memo keyed on object
    identity, the atom kept alive beside its result) keeps it linear.  The
    memo lives as long as the file's extraction."""

    __slots__ = ("_flat", "_flat_sets", "_bound", "_bound_outer", "_held_by_site")

    def __init__(self):
        self._flat: dict = {}  # (id(atom), within, levels) -> (atom, its flattening)
        # (id(atoms), within, levels) -> (atoms, their flattening): most sets flattened come back whole (a call
        # evaluated again on its next pass gets the environment's very sets)
        self._flat_sets: dict = {}
        self._bound: set = set()  # the callees whose calls flattened keep their arguments bound (call's ``bind``)
        # the functions of other modules, and the methods through a field or a typed receiver, whose calls
        # do so only where a call past the limit is given them, not inside such a call's arguments in turn
        # (``bind`` of a reference in ``_BOUND_OUTER_ONLY``): bound at both levels, the functions of other
        # modules cost 0.4 % more calls on vLLM than at this one
        self._bound_outer: set = set()
        # call site (ref, path, line) -> _holds_call's answers for it: a call is evaluated again on every
        # pass of the dataflow over its statement, mostly with the very argument sets of the pass before
        self._held_by_site: dict = {}
        start_file()
        _nested.clear()

    def flatten(self, atoms: frozenset, within: bool = False, levels: int = 1) -> frozenset:
        """``atoms`` with no call or collective result inside another, but for
        ``levels`` levels of calls of agreement helpers (``bind`` in
        :meth:`call`): such a call stays, bound to its arguments, each
        flattened one level less; any other call result becomes its callee's
        own result plus what its arguments depend on; and a collective inside
        a collective (``within``) gives up its own group (its inputs count
        whole), which only makes values less uniform."""
        flat_sets = self._flat_sets
        set_key = (id(atoms), within, levels)
        if set_key in flat_sets:
            known = flat_sets[set_key]
            if known[0] is atoms:
                return known[1]
        flat = self._flat
        out = set()
        for atom in atoms:
            tag = atom.tag
            if tag == "R" or tag == "C" or tag == "J" or tag == "A":
                # (_flatten_atom's memo read here first: most nested atoms were flattened before)
                memo_key = (id(atom), within, levels)
                if memo_key in flat:
                    known = flat[memo_key]
                    if known[0] is atom:
                        out |= known[1]
                        continue
                out |= self._flatten_atom(atom, within, levels)
            else:
                out.add(atom)
        result = flat_sets[set_key] = (atoms, frozenset(out))  # (the set kept: its id stays its own)
        return result[1]

    def _flatten_atom(self, atom, within: bool, levels: int = 1) -> frozenset:
        """:meth:`flatten` of one nested atom.  Atom sets are rebuilt all
        the time (every evaluation of an expression unions its parts anew),
        but the atoms in them are shared objects: the memo is per atom
        (:meth:`flatten` reads it before it calls this)."""
        memo_key = (id(atom), within, levels)
        tag = atom.tag
        if tag == "R" and levels and (atom.args or atom.kwargs) \
                and (atom.ref in self._bound or levels == BOUND_LEVELS and atom.ref in self._bound_outer):
            # an agreement helper's call stays bound to its arguments, so what
            # it agrees stays agreed (see call); so does the call of a function the whole-tree
            # pass may resolve, so it hands back only what its code returns of them
            result = frozenset((self._kept_bound(atom, within, levels),))
        elif tag == "R" and atom.ref.tag == "part" and atom.ref.index == PIECE_PICK:
            # what an index picks from a call's result (structure._piece_picks): the index as a length, or where
            # the callee cuts no pieces its fallback, the index whole; neither is part of what the callee returns
            sized = self.flatten(atom.args[0], within, levels)
            fallback = self.flatten(atom.fallback, within, levels)
            result = frozenset((call_result(atom.ref, (sized,), (), fallback, atom.path, atom.line, atom.text,
                                            1 + max(nesting(sized), nesting(fallback))),))
        elif tag == "R":
            result = frozenset((call_result(atom.ref, (), (), EMPTY, atom.path, atom.line, atom.text, 1),)) \
                | self.flatten(atom.fallback, within, levels)
        elif tag == "C":
            if within:
                result = self.flatten(atom.inner, True, 0)
            else:
                result = frozenset((collective_result(atom.group, self.flatten(atom.inner, True, 0), 1),))
        elif tag == "J":
            result = project(atom.transform, self.flatten(atom.inner, within, levels))
        else:
            result = attribute(self.flatten(atom.inner, within, levels), atom.attr)
        self._flat[memo_key] = (atom, result)
        return result

    def _kept_bound(self, atom, within: bool, levels: int):
        """The call result ``atom`` still bound to its arguments, each
        flattened one level less than ``levels``."""
        flatten = self.flatten
        inner = levels - 1
        args = tuple([flatten(a, within, inner) for a in atom.args])
        kwargs = tuple([(k, flatten(a, within, inner)) for k, a in atom.kwargs])
        fallback = flatten(atom.fallback, within, inner)
        depth = 1 + max([nesting(a) for a in args] + [nesting(a) for _, a in kwargs] + [nesting(fallback)])
        return call_result(atom.ref, args, kwargs, fallback, atom.path, atom.line, atom.text, depth, atom.alike_displays)

    def _flattened_fallback(self, fallback: frozenset, receiver: frozenset) -> frozenset:
        """A method call's fallback past the nesting limit: the object it is
        called on, where a call of the tree made it (``workspace =
        get_workspace(rank=r, group=g)``, then ``workspace.fits(n)``), stays
        that call bound to its arguments, so the whole-tree pass reads of them
        only what the callee hands back; spilt, the rank and the group it was
        given read as what the object is.  The rest is flattened as any
        argument is (and so is a receiver holding this very call, which
        :meth:`call` replaced in ``fallback`` by the callee's own result)."""
        kept = [atom for atom in receiver if atom.tag == "R" and (atom.args or atom.kwargs) and atom in fallback]
        if not kept:
            return self.flatten(fallback, False, BOUND_LEVELS)
        out = set(self.flatten(fallback.difference(kept), False, BOUND_LEVELS))
        for atom in kept:
            out.add(self._kept_bound(atom, False, BOUND_LEVELS))
        return frozenset(out)

    def call(self, ref, args, kwargs, fallback, path, line, text, bind: bool = False,
             receiver: frozenset = EMPTY, alike_displays: tuple = ()) -> frozenset:
        """The result of a call to ``ref`` (resolved by the whole-tree pass);
        ``bind``: an agreement helper (:func:`keeps_arguments_bound`), or
        another function the whole-tree pass may resolve, whose results
        flattened inside another call's arguments (:meth:`flatten`) keep their
        own arguments bound rather than spill them out (a function of another
        module, ``QualRef``, or a method through a field or a typed receiver,
        only directly inside that call's arguments);
        ``receiver``: what the object a method is called on holds (a part of
        ``fallback``); ``alike_displays``: :attr:`~.atoms.CallResult.alike_displays`."""
        # A loop that passes a call's result back into the same call
        # (``ok = gate(batch, ok)``) would nest it once per pass until the
        # nesting limit, where its arguments spill out whole: an argument the
        # callee never returns would then decide the result.  The earlier
        # result of this very call stands for itself as the callee's own
        # result (its parameters still bound to this call's other arguments).
        if bind and ref.tag != "class":
            (self._bound_outer if ref.tag in _BOUND_OUTER_ONLY else self._bound).add(ref)
        deepest = nesting(fallback) if fallback else 0  # (most argument sets are empty or hold no result)
        for a in args:
            if a:
                inner = nesting(a)
                if inner > deepest:
                    deepest = inner
        for _, a in kwargs:
            if a:
                inner = nesting(a)
                if inner > deepest:
                    deepest = inner
        if deepest:  # else no call result is inside at all
            own = (ref, path, line)
            held = self._held_by_site.get(own)
            if held is None:
                held = self._held_by_site[own] = {}
            if any(_holds_call(atoms, own, held) for atoms in args) \
                    or any(_holds_call(atoms, own, held) for _, atoms in kwargs) or _holds_call(fallback, own, held):
                itself = call_result(ref, (), (), EMPTY, path, line, text, 1)
                replaced: dict = {}
                args = tuple(_replace_call(a, own, itself, held, replaced) for a in args)
                kwargs = tuple((k, _replace_call(a, own, itself, held, replaced)) for k, a in kwargs)
                fallback = _replace_call(fallback, own, itself, held, replaced)
                deepest = max([nesting(a) for a in args] + [nesting(a) for _, a in kwargs] + [nesting(fallback)])
        depth = 1 + deepest
        if depth > MAX_NESTING:
            # the callee's parameters stay bound to the flattened arguments:
            # an argument its result does not depend on (a batch whose random
            # token ids a size test never reads, a flag an agreement helper
            # all-reduces before returning) stays out of the result, where
            # spilling every argument into the result handed it to every
            # reader (a callee the whole-tree pass cannot resolve reads the
            # flattened fallback, as any unresolved call does)
            flatten = self.flatten
            args = tuple([flatten(a, False, BOUND_LEVELS) for a in args])
            kwargs = tuple([(k, flatten(a, False, BOUND_LEVELS)) for k, a in kwargs])
            fallback = self._flattened_fallback(fallback, receiver)
            depth = 1 + max([nesting(a) for a in args] + [nesting(a) for _, a in kwargs] + [nesting(fallback)])
        return frozenset({call_result(ref, args, kwargs, fallback, path, line, text, depth, alike_displays)})

    def collective(self, group: str, inner: frozenset) -> frozenset:
        """The result of a collective over ``group`` of values ``inner``."""
        # A collective over a group of values some of which already came out of a
        # collective over the same group: those parts are uniform over it either
        # way, so their own inputs stand in for them.  Without this an in-place
        # collective in a loop (``while comm.allreduce(x) > 0: x -= 1``) built a
        # new nested atom per iteration and the dataflow never settled.
        if any(atom.tag == "C" and atom.group == group for atom in inner):
            flat = set()
            stack = list(inner)
            opened = set()  # nested atoms share parts: open each one once
            while stack:
                atom = stack.pop()
                if atom.tag == "C" and atom.group == group:
                    if id(atom.inner) not in opened:
                        opened.add(id(atom.inner))
                        stack.extend(atom.inner)
                else:
                    flat.add(atom)
            inner = frozenset(flat)
        depth = 1 + nesting(inner)
        if depth > MAX_NESTING:
            inner = self.flatten(inner)
            depth = 1 + nesting(inner)
        # a collective over the same group twice is still uniform over it
        if len(inner) == 1:
            (only,) = inner
            if only.tag == "C" and only.group == group:
                return inner
        return frozenset({collective_result(group, inner, depth)})


def issues_itself(ref, ctx, class_key) -> bool:
    """Whether ``ref`` calls a function of this file that reaches a
    collective (itself, or through the functions it calls: the file's deep
    functions): a module-level function, or a method of the class the call
    is made in (``self._broadcast(reqs, extra)``)."""
    tag = ref.tag
    if tag == "func":
        return ref.qualname in ctx.issuing_functions
    if tag == "method" and class_key is not None and ref.class_key == class_key:
        owner = ref.class_key.rpartition(":")[2]
        return f"{owner}.{ref.name}" in ctx.issuing_functions
    return False


def keeps_arguments_bound(ref, ctx, class_key) -> bool:
    """Whether a call of ``ref``, flattened inside the arguments of a call
    past the nesting limit, keeps its own arguments bound to the callee's
    parameters (``AtomBuilder.flatten``): a function of
    this file that reaches a collective (:func:`issues_itself`), or a
    method of the calling class that the class inherits from a base another
    file defines (a mixin's ``self._broadcast(reqs)``).  Whether that one
    reaches a collective is known only to the whole-tree pass, which reads
    the callee's parameters where they are bound; spilt, its arguments would
    decide its result whatever it agreed before returning."""
    tag = ref.tag
    if tag == "func":
        return ref.qualname in ctx.issuing_functions
    if tag != "method" or class_key is None or ref.class_key != class_key:
        return False
    name = ref.name
    if f"{class_key.rpartition(':')[2]}.{name}" in ctx.issuing_functions:
        return True
    memo = ctx.__dict__.setdefault("_inherited_methods", {})  # worked out once per class and name
    known = memo.get(key := (class_key, name))
    if known is None:
        known = memo[key] = inherited_from_another_file(ctx, class_key, name)
    return known


def inherited_from_another_file(ctx, class_key: str, name: str) -> bool:
    """Whether the class ``class_key`` of this file runs a method ``name``
    it inherits from a base another file defines: neither it nor a base of
    this file (followed base by base) defines one, and some base is not a
    class of this file (``object`` aside)."""
    definitions = ctx.definitions()
    module = ctx.module
    stack = [class_key]
    seen = set()
    elsewhere = False
    while stack:
        key = stack.pop()
        if key in seen:
            continue
        seen.add(key)
        owner = key.partition(":")[2]
        if f"{owner}.{name}" in definitions:
            return False
        for base in reversed(ctx.class_bases.get(key, ())):
            if base in ctx.module_classes:
                stack.append(f"{module}:{base}")
            elif base not in ("object", "builtins.object"):
                elsewhere = True
    return elsewhere
