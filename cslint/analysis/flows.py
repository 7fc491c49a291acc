"""The variables a walker carries through a function's statements: a
:class:`Flow` hands each statement to the transfer functions
(:mod:`cslint.analysis.transfer`) with the variables before it, how its
writes land (added to what a name held in the summary walk, replacing it in
the CFG dataflow), the implicit flow at the statement and whether only one
rank of the group can run it; :class:`RecordingFlow` notes the names written
(the dataflow's replay of a node); :class:`LoopRebinds` is the summary walk's
loop whose body binds some names anew before anything reads them.
"""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import DEFINITIONS, walked
from .environment import fork
from .localdicts import key_own_entry

#: the dict keys of a walker that tracks none (read only)
_NO_KEYS: dict = {}


class Flow:
    """The variables around one statement.

    ``env`` holds the values before the statement (what it reads);
    :meth:`write` lands a value in ``out`` (a copy made on the first write,
    or ``env`` itself for a walker that updates in place).  ``implicit`` and
    ``single_rank`` are values or functions computing them on first use."""

    __slots__ = ("env", "out", "accumulate", "_implicit", "_single_rank", "dict_keys", "element_stores", "rebinds",
                 "alike")

    def __init__(self, env: dict, implicit, *, accumulate: bool, in_place: bool = False,
                 single_rank=False, dict_keys: Optional[dict] = None, element_stores: frozenset = frozenset(),
                 rebinds: Optional[LoopRebinds] = None, alike=None):
        self.env = env
        #: store key -> the implicit flow a store changes its container's own
        #: structure by (None: ``implicit``), see :meth:`store_implicit`
        self.alike = alike
        self.rebinds = rebinds
        self.out = env if in_place else None
        self.accumulate = accumulate
        self._implicit = implicit
        self._single_rank = single_rank
        self.dict_keys = dict_keys or _NO_KEYS
        self.element_stores = element_stores

    def store_implicit(self, key_of, node) -> frozenset:
        """The implicit flow by which a store (its key ``key_of(node)``:
        :func:`~cslint.analysis.stores.call_key`) changes its container
        itself: without the tests each path of which stores alike
        (:mod:`cslint.analysis.stores`), which decide the element only."""
        implicit = self.implicit  # read, so a replay of the statement compares it
        if self.alike:
            key = key_of(node)
            found = self.alike(key) if key is not None else None
            if found is not None:
                return found
        return implicit

    @property
    def implicit(self) -> frozenset:
        value = self._implicit
        if type(value) is not frozenset:
            value = self._implicit = value()
        return value

    @property
    def single_rank(self) -> bool:
        value = self._single_rank
        if type(value) is not bool:
            value = self._single_rank = value()
        return value

    def current(self) -> dict:
        """The variables with the statement's writes so far."""
        return self.out if self.out is not None else self.env

    def write(self, name, atoms: frozenset, strong: bool = True, own: Optional[frozenset] = None) -> None:
        """``name`` now holds ``atoms`` (``strong``) or also holds them.

        A container an element is stored into keeps its own structure
        apart, ``("own", name)``: any other write of the name writes it too;
        an element store gives ``own``, what it changes of the container
        itself (the key, and the implicit flow: a store on some ranks only
        changes the length there), while the container holds the element's
        whole value (its contents, and the structure of one of its
        elements).  So a read of the container's own structure (its truth,
        length, None-ness, kind, a loop's trip count: the evaluator's
        ``own_structure``) does not see an element's structure, and a read
        of an element sees all of it."""
        out = self.out
        if out is None:
            out = self.out = fork(self.env)  # a plain copy, or shared layers for a large environment
        if strong and not self.accumulate:
            out[name] = atoms
        elif strong and self.rebinds is not None and self.rebinds.replaces(name, out):
            out[name] = atoms
        else:
            old = out.get(name)
            out[name] = atoms if old is None else old | atoms
        keys = self.dict_keys.get(name) if type(name) is str else None
        if keys:
            # any write to the dict itself reaches every key; a literal
            # refines them afterwards (transfer._dict_literal_keys)
            for key in keys:
                self.write(("key", name, key), atoms, strong)
                self.write(key_own_entry(name, key), atoms, strong)  # (localdicts: refined by a display)
        if type(name) is str and name in self.element_stores:
            self.write(("own", name), atoms if own is None else own, strong if own is None else True)


class RecordingFlow(Flow):
    """A :class:`Flow` that notes the variables written, in order (the CFG
    dataflow's replay of a node's transfer)."""

    __slots__ = ("written",)

    def write(self, name, atoms: frozenset, strong: bool = True, own=None) -> None:
        self.written[name] = None
        Flow.write(self, name, atoms, strong, own)


class LoopRebinds:
    """The names a loop's body binds, in a statement of its own, before
    anything in the loop reads them (``for t in ts: pad = size(t);
    pads.append(pad)``): no iteration reads what an earlier one left there,
    so the summary walk's statements of that body bind them anew instead of
    adding to what they held (a read after the binding sees its value only,
    not another iteration's later one).  What a binding replaces is kept
    (``replaced``) and added back once the loop is done, so a read after the
    loop still sees every value the name held (no trip, a ``break``)."""

    __slots__ = ("names", "replaced")

    def __init__(self, names: frozenset):
        self.names = names
        self.replaced: dict = {}

    def replaces(self, name, out: dict) -> bool:
        """Whether a strong write of ``name`` (a variable, or a dict key or
        container's own structure of one: ``("key", name, k)``,
        ``("own", name)``) replaces its value; what it held is kept."""
        if (name if type(name) is str else name[1]) not in self.names:
            return False
        old = out.get(name)
        if old is not None:
            held = self.replaced.get(name)
            self.replaced[name] = old if held is None else held | old
        return True


def loop_rebinds(loop) -> frozenset:
    """The names :class:`LoopRebinds` binds anew in ``loop``'s body: bound
    by a plain assignment that is a statement of the body itself, with no
    occurrence of the name before it in the loop (its header included) nor
    in its own value, and none in a function, lambda or class defined in
    the loop (which may read it later)."""
    seen: set = set()
    found: set = set()
    header = (loop.target, loop.iter) if type(loop) is not ast.While else (loop.test,)
    for node in header:
        seen.update(n.id for n in walked(node) if type(n) is ast.Name)
    for s in loop.body:
        t = type(s)
        if t is ast.Assign or (t is ast.AnnAssign and s.value is not None):
            targets = s.targets if t is ast.Assign else (s.target,)
            value_names = {n.id for n in walked(s.value) if type(n) is ast.Name}
            for target in targets:
                for n in walked(target):
                    if type(n) is ast.Name and n.id not in seen and n.id not in value_names:
                        found.add(n.id)
        for n in walked(s):
            if type(n) is ast.Name:
                seen.add(n.id)
            elif type(n) in DEFINITIONS and found:
                found.difference_update(m.id for m in walked(n) if type(m) is ast.Name)
            elif type(n) is ast.Global or type(n) is ast.Nonlocal:
                found.difference_update(n.names)
    return frozenset(found)


