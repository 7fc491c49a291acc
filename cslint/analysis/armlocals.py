"""What a local name the summary walk binds holds: the tests it leaves out.

:class:`ArmLocals` is the summary walk's twin of the dataflow's
``BindingFlow.tests_read_alike``, read off the syntax: an ``if`` arm every
mention of a name lies in (``arms.ArmReads`` for a deep function), and an
exit the walk went past outside loops and ``try`` (the dataflow's
``armexits.leaving_tests``), decide nothing for the ranks that read it.
"""

from __future__ import annotations

import ast

from .astwalk import CHILDREN, DEFINITIONS, walked
from .atoms import EMPTY
from .vocabulary import MUTATORS

#: what holds statements or is one: a statement's own expressions are read apart from theirs
_HOLDERS = (ast.stmt, ast.excepthandler, ast.match_case)


def _plain_names(target) -> bool:
    return type(target) is ast.Name or type(target) is ast.Tuple and all(type(e) is ast.Name for e in target.elts)


def local_write(s) -> bool:
    """Whether every write ``s`` makes is to local names: an assignment to
    plain names (or a tuple of them) whose value is no mutator called on
    anything but a name (``x = self.queue.pop()`` changes a field), a
    mutator called on a name as a statement (``fetch.extend(params)``), or
    the header of a ``for`` binding plain names."""
    kind = type(s)
    if kind is ast.For or kind is ast.AsyncFor:
        return _plain_names(s.target)
    if kind is ast.Assign or kind is ast.AnnAssign:
        if not all(_plain_names(target) for target in (s.targets if kind is ast.Assign else (s.target,))):
            return False
    elif kind is not ast.Expr:
        return False
    value = s.value
    call = value.value if type(value) is ast.Await else value
    mutates = type(call) is ast.Call and type(call.func) is ast.Attribute and call.func.attr in MUTATORS
    if kind is ast.Expr:
        return mutates and type(call.func.value) is ast.Name
    return not mutates or type(call.func.value) is ast.Name


class ArmLocals:
    """The summary walk's twin of :meth:`ArmReads.read_only_in_arm`, read
    off the syntax: the ``if`` arms being walked, and what a local name an
    arm binds holds (:meth:`binding_implicit`).  Asked only outside loops
    and ``try`` statements.

    It also keeps the tests of the exits the walk has gone past outside
    loops and ``try`` (:attr:`frames`): each leaves the function on the
    ranks it holds for, so the ranks that write a local name after it (in
    a later loop or ``try`` too) all took the way that stays and read it
    alike, as the dataflow's ``BindingFlow.tests_read_alike`` says of a test
    one arm of which leaves the function (``if not names: return None`` then
    ``fetch = []``: a callee handed ``fetch`` gets an empty list on every
    rank that calls it; whether it is called still follows the test, in the
    call's own flow, and so do the fields and the results: :meth:`without_exits`)."""

    __slots__ = ("info", "_arms", "_mentions", "frames", "_held")

    def __init__(self, info):
        self.info = info
        #: outermost first: [the ``if``, its test's atoms, the flow before it, the exits met in its arms]
        self._arms: list = []
        self._mentions = None  # name -> the statements mentioning it (_index)
        #: per block being walked, outermost first (the walk pushes and pops one per block): (what the
        #: tests of each exit gone past in it outside loops and ``try`` brought anew to the flow, what
        #: those of the other exits met in it brought: they stay)
        self.frames: list = []
        #: what a statement being walked adds to the flow of its blocks other than an ``if`` test (a
        #: loop's trip count, a ``match`` subject, what a handler caught): it stays
        self._held: list = []

    def hold(self, atoms: frozenset) -> None:
        self._held.append(atoms)

    def release(self) -> None:
        self._held.pop()

    def _gone_and_kept(self) -> tuple:
        """(what the exits gone past brought, what the other exits met and the held values bring)."""
        gone = kept = EMPTY
        for left, stayed in self.frames:
            if left:
                gone = gone.union(*left)
            if stayed:
                kept = kept.union(*stayed)
        return gone, kept.union(*self._held) if self._held else kept

    def without_exits(self, s, implicit: frozenset) -> frozenset:
        """The implicit flow into what ``s`` writes, in a loop or ``try``, where
        every write of it is to local names: a plain assignment to names or
        a mutator called on a name (``fetch.extend(m.parameters())``), and
        no field mutator as the value; without what the exits gone past
        brought (:attr:`frames`) and no other test, trip count or exit of the
        flow also brings."""
        if not implicit or not any(left for left, _ in self.frames) or not local_write(s) \
                or self.info.walrus_by_statement.get(id(s)):
            return implicit
        gone, kept = self._gone_and_kept()
        for _decision, cond, _before, exits in self._arms:
            kept = kept | cond
            for atoms in exits:
                kept = kept | atoms
        return implicit - (gone - kept)

    def entered(self, decision: ast.If, cond: frozenset, implicit: frozenset) -> None:
        self._arms.append((decision, cond, implicit, []))

    def left(self) -> None:
        self._arms.pop()

    def exited(self, atoms: frozenset) -> None:
        """An exit met in the innermost arm: what its test brings stays in what the arm binds after it."""
        if self._arms:
            self._arms[-1][3].append(atoms)

    def binding_implicit(self, s, implicit: frozenset) -> frozenset:
        """The implicit flow into the local names an assignment ``s`` binds
        (every target a plain name), walked with ``implicit``: without the
        test of an enclosing ``if`` every mention of those names is inside
        the arms of (its body or its ``else``, none in a nested function,
        class or lambda, none ``global`` or ``nonlocal``), as
        :class:`ArmReads` decides for a deep function.  Every rank reading
        what the arm binds took that arm, so its test does not make the
        names differ between them (``if not last_stage: first = outputs[0];
        part = Part(first)``: the part's fields hold what every rank
        building one computed alike).  What leaves the arm keeps the test:
        the calls, returns and field writes of a statement read the full flow."""
        kind = type(s)
        if not implicit:
            return implicit
        if kind is not ast.Assign and kind is not ast.AnnAssign:
            return self.without_exits(s, implicit)  # a mutator called on a local name
        past = any(left for left, _ in self.frames)
        if not (past or any(cond for _, cond, _, _ in self._arms)):
            return implicit  # no test of an arm or of an exit gone past to leave out
        names = set()
        for target in (s.targets if kind is ast.Assign else (s.target,)):
            if type(target) is ast.Name:
                names.add(target.id)
            elif type(target) is ast.Tuple and all(type(elt) is ast.Name for elt in target.elts):
                names.update(elt.id for elt in target.elts)
            else:
                return implicit
        if self.info.walrus_by_statement.get(id(s)):
            return implicit
        skipped = kept = frozenset()
        outermost = None
        for decision, cond, before, exits in self._arms:
            if self._only_inside(decision, names):
                skipped = skipped | cond
                if outermost is None:
                    outermost = before
            else:
                kept = kept | cond
            for atoms in exits:
                kept = kept | atoms
        if not past:
            if not skipped:
                return implicit
            # only the tests left out go: an atom a kept test, an exit met in an
            # arm or the flow before the outermost arm also brings stays
            return implicit - (skipped - kept - outermost)
        if not local_write(s):
            return implicit
        # and what the exits gone past brought, but for what another exit or
        # a held value brings, or the flow before the outermost arm left out
        # brought before them
        gone, stayed = self._gone_and_kept()
        kept = kept | stayed
        if outermost is not None:
            kept = kept | (outermost - gone)
        return implicit - ((skipped | gone) - kept)

    def _only_inside(self, decision: ast.If, names) -> bool:
        mentions = self._mentions
        if mentions is None:
            mentions = self._mentions = self._index()
        parents = self.info.parents
        for name in names:
            found = mentions.get(name)
            if found is None:
                continue
            if not found:
                return False
            for holder in found:
                # the test itself, or a statement no arm of the decision holds
                parent = parents.get(id(holder)) if holder is not decision else None
                while parent is not None and parent is not decision:
                    parent = parents.get(id(parent))
                if parent is None:
                    return False
        return True

    def _index(self) -> dict:
        """name -> the statements (or handlers, cases) whose own expressions
        mention it; () for a name nested code mentions or declares."""
        mentions: dict = {}
        nested = set()
        table = CHILDREN
        holders = list(self.info.body)
        for holder in holders:  # grows: the statements inside each one
            kind = type(holder)
            if kind in DEFINITIONS:
                nested.update(sub.id for sub in walked(holder) if type(sub) is ast.Name)
                nested.add(holder.name)
                continue
            if kind is ast.Global or kind is ast.Nonlocal:
                nested.update(holder.names)
                continue
            read = table[kind]
            if read is None:
                continue
            todo = []
            for child in read(holder):
                if isinstance(child, _HOLDERS):
                    holders.append(child)
                else:
                    todo.append(child)
            for node in todo:  # grows: each expression's nodes
                kind = type(node)
                if kind is ast.Name:
                    mentions.setdefault(node.id, []).append(holder)
                elif kind is ast.Lambda:
                    nested.update(sub.id for sub in walked(node) if type(sub) is ast.Name)
                read = table[kind]
                if read is not None:
                    todo += read(node)
        for name in nested:
            mentions[name] = ()
        return mentions
