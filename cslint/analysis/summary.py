"""The summary walk: what a function that cannot reach a collective passes on
to the rest of the tree (the fields it writes, what it returns, the arguments
it passes to analysed functions), from one syntactic pass instead of a CFG.

Variables accumulate (flow-insensitive within branches) in statement order,
except that an assignment of the function's own body replaces what the name
held (``items = local(); items = received``: later reads see ``received``): a
read sees the assignments before it, and inside a loop those of the whole
loop, whose body is walked twice (the first walk only carries the values it
assigns round to the next iteration), except for a name the body binds anew
before anything in the loop reads it (:class:`~cslint.analysis.flows.LoopRebinds`).  Implicit flow comes from the enclosing
tests and from earlier rank-local exits in the same block; what a local
name holds leaves out the tests of the exits gone past outside loops and
``try`` (the ranks they held for left the function) and of the ``if`` arms
every mention of it lies in (:class:`~cslint.analysis.armlocals.ArmLocals`).
Sound for summaries, much cheaper than the dataflow.
"""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import DEFINITIONS, LOOPS
from .jobkills import exceptions_hang
from .armlocals import ArmLocals
from .arms import assigned_past_return, may_select_own_part, selects_own_part
from .atoms import CONTENTS, EMPTY, project, whole
from .exits import always_raises, leaves_function, raises_exit
from .escapes import statement_escapes
from .exclusive import ruled_out_walk
from .feasibility import handed_flags
from .evaluator import Evaluator, ReadWatch
from .structure import params_own
from .presentreturns import add_returned
from .raises import reraised_tree, swallowed_here, tree_raise
from .recorded import assert_holds_where_reached
from .records import Variant
from .setfields import summary_entry
from .summarycalls import SummaryCalls
from .stores import alike_tests, in_loop_body, tests_around_stores
from .bindings import target_names
from .syntax import first_exit_in
from .flows import Flow, LoopRebinds, loop_rebinds
from .fieldwrites import mutator_call
from .transfer import Transfer

#: statements that bind no variable
_BINDS_NOTHING = frozenset({ast.Return, ast.Raise, ast.Assert, ast.Pass, ast.Break, ast.Continue, ast.Delete,
                            ast.Global, ast.Nonlocal})


def _crashing_arm(s: ast.If, exits: frozenset) -> Optional[bool]:
    """Which arm of ``s`` can only raise an error (True: its body, False: its ``else``) where the
    other can do something else; None where neither or both."""
    body, orelse = always_raises(s.body, exits), always_raises(s.orelse, exits)
    return None if body == orelse else body


def _exit_in_arms(s: ast.If, exits: Optional[frozenset]) -> bool:
    """Whether an arm of ``s`` holds an exit that skips what follows ``s``
    (:func:`_exit_outside_crashes`; ``exits`` None inside a ``try``, whose
    handlers may catch any raise: every exit counts there)."""
    if exits is None:
        return bool(first_exit_in(s.body) or first_exit_in(s.orelse))
    return _exit_outside_crashes(s.body, exits) or _exit_outside_crashes(s.orelse, exits)


def _exit_outside_crashes(stmts, exits: frozenset) -> bool:
    """Whether a block holds a return, raise, ``continue``, ``break`` or
    process exit (:func:`~cslint.analysis.syntax.first_exit_in`) outside
    the arms of its ``if`` statements that can only raise where the other
    arm can go on (:func:`_crashing_arm`): such a raise ends the process,
    so the tests above it send no rank past what follows (``if spec and
    last_stage: if m == "a": ... else: raise ValueError(m)``, then the
    fields every rank that goes on assigns).  Asked outside ``try`` only."""
    for stmt in stmts:
        if type(stmt) is not ast.If:
            if first_exit_in((stmt,)) is not None:
                return True
            continue
        crashing = _crashing_arm(stmt, exits)
        if (crashing is not True and _exit_outside_crashes(stmt.body, exits)) \
                or (crashing is not False and _exit_outside_crashes(stmt.orelse, exits)):
            return True
    return False


def _unbind(env: dict, names) -> dict:
    """Take ``names`` out of ``env`` (each with its own structure and
    keys, ``("own", name)``, ``("key", name, k)``) and return what they
    held, so that a loop's header binds them anew."""
    held = {}
    if not names:
        return held
    wanted = set(names)
    for key in [k for k in env if (k if type(k) is str else k[1] if type(k) is tuple and len(k) > 1 else None) in wanted]:
        held[key] = env.pop(key)
    return held


def _restore(env: dict, before: dict) -> None:
    env.clear()
    env.update(before)


def _reads_arguments_after_binding(s, t, in_try: bool) -> bool:
    """Whether, while carrying values round, a statement may evaluate a
    call again after it bound a variable (``a, b = x, f(a)``, ``with
    f() as a, g(a) as b``, or :meth:`SummaryWalk._raised_in` after the last
    statement of a ``try`` body, ``in_try``): the call's arguments are then the
    ones :meth:`SummaryWalk._calls` put in the memo before the binding, and the
    memo must hold them.  A statement that binds nothing (a bare
    call, a field write, a ``return``) evaluates what it needs once."""
    if t is ast.Expr:
        return in_try and mutator_call(s) is not None  # ``xs.append(f(x))`` binds ``xs``
    if t is ast.Assign or t is ast.AnnAssign or t is ast.AugAssign:
        targets = s.targets if t is ast.Assign else (s.target,)
        return not all(type(target) is ast.Attribute for target in targets)
    return t not in _BINDS_NOTHING


class SummaryWalk(SummaryCalls):
    """The summary of one function (see the module docstring)."""

    def __init__(self, evaluator: Evaluator):
        self.evaluator = evaluator
        self.info = evaluator.info
        self.transfer = Transfer(evaluator)
        self._calls_memo: dict = {}  # id(statement) -> [(call, ref)]
        self._bare_memo: dict = {}  # id(statement) -> [(call, ref)] of its calls without arguments
        self.case_params = handed_flags(self.info)  # what its calls may hand on (Site.forwarded)
        self.exit_env: dict = {}
        self._in_loop = False
        # The first walk of an outermost loop only carries values round once its facts are known
        # to be dropped (:meth:`_outermost_loop`): what it would pass on (call sites, returns,
        # field writes, raises) is then not worked out.
        self._carrying = False
        self._watch = None  # the reads of a first walk that may keep its facts
        self._in_try = 0
        self._caught: list = []  # per handler walked: (what its try body raised, its tree raises)
        self._rebinds_memo: dict = {}  # id(loop) -> the names its body binds anew (loop_rebinds)
        # id(statement) -> the implicit flow it is walked with: an assignment both a
        # returning ``if`` of the function's body and the rest of the body make
        # (arms.assigned_past_return) is not decided by that ``if``
        self._alike: dict = {}
        #: local containers an element is stored into: their own structure is
        #: kept apart (``("own", name)``, Flow.write), so what the function
        #: returns has one (``Variant.return_own``)
        self._element_stores = self.info.element_stores
        #: store key -> the implicit flow its stores change the container by, under a test whose
        #: every path stores alike (stores.py); id(if) -> its alike_tests
        self._alike_implicit: dict = {}
        self._alike_memo: dict = {}
        self._around_stores: Optional[frozenset] = None
        self._arms = ArmLocals(self.info)  # the arms being walked: what their locals hold

    def variant(self) -> Variant:
        """Field writes, returns and argument flows of the function."""
        variant = Variant()
        env = self.info.entry_env()
        env.update(summary_entry(self.evaluator))  # the fields its callers hand it (setfields.py)
        for name in self._element_stores & env.keys():
            # a parameter stored into: its own structure, kept apart (Flow.write), is its own part (what the caller keeps apart)
            env[("own", name)] = params_own(self.info, env[name]) or env[name]
        variant.raised = variant.raised_tree = EMPTY
        if exceptions_hang(self.info):  # (not a method only a job-killing ``try`` runs: jobkills.py)
            variant.escapes = EMPTY
        self._block(self.info.body, env, EMPTY, variant, straight=True)
        self.evaluator.args_memo = None
        self.exit_env = env
        return variant

    def _block(self, stmts, env, implicit, variant, straight: bool = False,
               rebinds: Optional[LoopRebinds] = None) -> frozenset:
        """Walk a block; returns the atoms of the conditions under which an
        exit inside it skips what follows (the rest of an enclosing block too).
        ``rebinds``: the block is a loop's body, whose own statements bind
        those names anew (:class:`LoopRebinds`)."""
        exits = EMPTY
        top = stmts is self.info.body
        until_end = None  # the store keys decided alike from a test of this block to its end
        statement = ruled_out_walk(stmts, self.info, self._in_loop, self._statement)  # (exclusive.py)
        frames = self._arms.frames  # the exits met in this block (ArmLocals.frames)
        gone, stayed = frame = ([], [])
        frames.append(frame)
        for index, s in enumerate(stmts):
            if top and type(s) is ast.If and not s.orelse:
                for made in assigned_past_return(stmts, s).values():
                    for stmt in made:
                        self._alike[id(stmt)] = implicit
            after = None
            if type(s) is ast.If and self._element_stores and id(s) in self._store_tests():
                after, rest = self._stores_alike(stmts, index, implicit)
                until_end = rest if until_end is None else until_end + rest
            if type(s) in LOOPS and not self._in_loop:
                self._in_loop = True
                try:
                    exit_atoms = self._outermost_loop(s, env, implicit, variant, straight)
                finally:
                    self._in_loop = self._carrying = False
                    self._watch = self.evaluator.watch = None
            else:
                exit_atoms = statement(s, env, implicit, variant, straight, rebinds)
            for key in after or ():
                del self._alike_implicit[key]
            if exit_atoms:
                if self._in_loop or self._in_try:
                    self._arms.exited(exit_atoms)
                    stayed.append(exit_atoms)
                else:
                    # every exit here leaves the function: a local written past it is read by the ranks that stayed
                    gone.append(exit_atoms - implicit)
                implicit = implicit | exit_atoms
                exits = exits | exit_atoms
        for key in until_end or ():
            del self._alike_implicit[key]
        frames.pop()
        return exits

    def _store_tests(self) -> frozenset:
        """:func:`~cslint.analysis.stores.tests_around_stores` of the function (once)."""
        found = self._around_stores
        if found is None:
            found = self._around_stores = tests_around_stores(self.info.body, self.info.parents, self._element_stores)
        return found

    def _stores_alike(self, stmts: list, index: int, implicit: frozenset) -> tuple:
        """The store keys every path of the ``if`` at ``stmts[index]`` stores
        alike (:func:`~cslint.analysis.stores.alike_tests`) and not already
        so decided further out: their stores change the container by the
        implicit flow before the test (``Flow.alike``).  (the keys to drop
        after the test, those to drop at the block's end)."""
        stmt = stmts[index]
        found = self._alike_memo.get(id(stmt))
        if found is None:
            found = self._alike_memo[id(stmt)] = alike_tests(
                stmts, index, in_loop_body(stmts, self.info.parents), self._element_stores)
        after, rest = [], []
        for key, through_rest in found:
            if key not in self._alike_implicit:
                self._alike_implicit[key] = implicit
                (rest if through_rest else after).append(key)
        return after, rest

    def _outermost_loop(self, s, env, implicit, variant, straight: bool) -> frozenset:
        """An outermost loop is walked twice: the first walk carries what
        its body assigns round to the next iteration (loops nested in it
        included) and its facts are dropped.  Code outside loops is walked
        once, so an earlier read never sees a later assignment.

        Inside the loop every write adds to what a variable held.  Where
        every variable the first walk read still holds, at its end, what
        each read gave, the second walk would read and find the same: the
        first walk's facts stand and the second is left out (most loops).
        From the first write that changes a variable read before, the
        first walk only carries values round (:attr:`_carrying`)."""
        if self.info.walrus_by_statement.get(id(s)):
            # ``while (item := next_item()):`` binds anew on every test
            self._carrying = True
            self._statement(s, env, implicit, Variant(raised=EMPTY), straight)
            self._carrying = False
            return self._statement(s, env, implicit, variant, straight)
        kept = _FactsMark(variant)
        watch = self._watch = self.evaluator.watch = ReadWatch()
        exit_atoms = self._statement(s, env, implicit, variant, straight)
        self._watch = self.evaluator.watch = None
        self._carrying = False
        if not watch.changed:
            return exit_atoms
        kept.restore(variant)
        return self._statement(s, env, implicit, variant, straight)

    def _statement(self, s, env, implicit, variant, straight: bool = False,
                   rebinds: Optional[LoopRebinds] = None) -> frozenset:
        """Handle one statement; returns the atoms of a condition under which
        the rest of the block may be skipped (an early exit inside it)."""
        t, key = type(s), id(s)
        if self._alike:
            implicit = self._alike.get(key, implicit)
        local_implicit = self._arms.without_exits(s, implicit) if self._in_loop or self._in_try or key in self._alike \
            else self._arms.binding_implicit(s, implicit)
        transfer = self.transfer
        watch = self._watch
        alike = self._alike_implicit.get if self._alike_implicit else None  # (stores.py)
        if watch is None:
            # a statement of the function's own body (``straight``) writes strongly:
            # ``items = local(); items = received`` leaves only ``received``
            flow = Flow(env, local_implicit, accumulate=not straight, in_place=True, rebinds=rebinds,
                        element_stores=self._element_stores, alike=alike)
        elif watch.changed:
            # this walk's facts will be dropped: from here on it only carries values round
            self._watch = self.evaluator.watch = None
            self._carrying = True
            flow = Flow(env, local_implicit, accumulate=not straight, in_place=True, rebinds=rebinds,
                        element_stores=self._element_stores, alike=alike)
        else:
            flow = _WatchedFlow(env, local_implicit, watch, accumulate=not straight, rebinds=rebinds,
                                element_stores=self._element_stores, alike=alike)
        if t in DEFINITIONS:
            transfer.simple_statement(s, flow)
            return EMPTY
        evaluate = self.evaluator.eval
        self.evaluator.args_memo = {}
        carrying = self._carrying
        walrus = self.info.walrus_by_statement.get(key)
        if not carrying:
            self._calls(s, env, variant, implicit)
        elif walrus or _reads_arguments_after_binding(s, t, self._in_try > 0):
            self._fill_args_memo(s, env)
        if walrus:
            transfer.walrus(walrus, flow)
        if t is ast.If:
            truth = self.evaluator.truth(s.test, env)
            # a rank finding its own part of a partition writes on every rank (arms.py)
            own_part = may_select_own_part(s) and selects_own_part(s, self.info.parents, self.info.blocks,
                                                                   self.info.ctx.size_reads)
            cond = project(CONTENTS, truth) if own_part else whole(truth)
            inner = implicit | cond
            # an arm that leaves the function (its last statement a return or
            # a raise, outside any try) hands none of its assignments on: the
            # statements after the test, and the other arm, see what the
            # variables held before it
            body_leaves = not self._in_try and leaves_function(s.body)
            else_leaves = not self._in_try and leaves_function(s.orelse)
            # an arm that can only raise ends the process (a crash, not a skip): its test decides nothing
            # (cfg._if); where the launcher leaves the other ranks running, it is an exit like any other
            crashes = not self._in_try and not exceptions_hang(self.info)
            crashing = _crashing_arm(s, self.info.ctx.exit_exceptions) if crashes else None
            before = dict(env) if body_leaves or else_leaves else None
            self._arms.entered(s, cond, implicit)
            nested = self._block(s.body, env, implicit if crashing is False else inner, variant)
            if body_leaves:
                _restore(env, before)
            elif else_leaves:
                before = dict(env)
            nested_else = self._block(s.orelse, env, implicit if crashing is True else inner, variant)
            self._arms.left()
            if else_leaves:
                _restore(env, before)
            if crashing is not None:
                return nested_else if crashing else nested
            # an exit nested deeper (``if a: if b: continue``) skips the rest on its own condition too
            exits = self.info.ctx.exit_exceptions if crashes else None
            return cond | nested | nested_else if _exit_in_arms(s, exits) else EMPTY
        if t in (ast.For, ast.AsyncFor):
            # the header binds its target anew for every iteration: what an
            # iteration stored into its element (``group['params'] = [mine]``)
            # is not what the next one reads; what it held before comes back
            # once the loop is done (no trip)
            held = _unbind(env, target_names(s.target))
            trips = whole(transfer.loop_target(s, flow))
            self._arms.hold(trips)
            self._loop_body(s, env, implicit | trips, variant)
            self._bind_back(env, held)
            self._block(s.orelse, env, implicit | trips, variant)
            self._arms.release()
            return EMPTY
        if t is ast.While:
            cond = whole(self.evaluator.truth(s.test, env))
            self._arms.hold(cond)
            self._loop_body(s, env, implicit | cond, variant)
            self._block(s.orelse, env, implicit | cond, variant)
            self._arms.release()
            return EMPTY
        if t is ast.Try or type(s).__name__ == "TryStar":
            # what fails in the body or a handler may be handled: escapes.py looks no further
            self._in_try += 1
            try:
                self._block(s.body, env, implicit, variant)
                raised = whole(self._raised_in(s.body, env, implicit))
                self._caught.append((raised, reraised_tree(self.info, s.body, raised)))
                self._arms.hold(raised)
                for handler in s.handlers:
                    transfer.exception_name(handler, raised, flow)
                    self._block(handler.body, env, implicit | raised, variant)
                self._arms.release()
            finally:
                self._in_try -= 1
                del self._caught[len(self._caught) - 1:]
            self._block(s.orelse, env, implicit, variant)
            self._block(s.finalbody, env, implicit, variant)
            return EMPTY
        if t in (ast.With, ast.AsyncWith):
            transfer.simple_statement(s, flow)
            self._block(s.body, env, implicit, variant)
            return EMPTY
        if t is ast.Match:
            subject = whole(evaluate(s.subject, env))
            self._arms.hold(subject)
            for case in s.cases:
                self._block(case.body, env, implicit | subject, variant)
            self._arms.release()
            return EMPTY
        if carrying:
            # nothing below but the statement's own bindings reaches the variables
            transfer.simple_statement(s, flow)
            return EMPTY
        if t is ast.Return:
            add_returned(variant, self.evaluator, s, env, transfer.returned(s, flow), transfer.returned_none(s, flow))
            return EMPTY
        if t is ast.Expr:
            variant.add_return(transfer.yielded(s, flow))
        elif t is ast.Raise and not swallowed_here(self.info, s):
            # raised where the tests above it hold; in a handler, also where what it caught came from
            variant.raised = variant.raised | implicit
            if variant.raised_tree is not None:
                variant.raised_tree = variant.raised_tree | tree_raise(s, implicit, self._caught)
            if variant.escapes is not None and not self._in_try and s.exc is not None \
                    and not raises_exit(s, self.info.ctx.exit_exceptions):
                variant.escapes = variant.escapes | implicit  # it leaves the ranks whose tests above it hold
        elif t is ast.Assert and not swallowed_here(self.info, s) and not assert_holds_where_reached(self.info, s):
            failing = implicit | self.evaluator.truth(s.test, env)
            variant.raised = variant.raised | failing
            if variant.escapes is not None and not self._in_try:
                variant.escapes = variant.escapes | failing
        if variant.escapes is not None and not self._in_try:
            variant.escapes = variant.escapes | statement_escapes(self.info, s, implicit)
        transfer.simple_statement(s, flow)
        transfer.field_writes(s, flow, variant.fields, variant.field_types)
        return EMPTY

    def _loop_body(self, loop, env, implicit, variant) -> None:
        """Walk a loop's body, whose own statements bind anew the names no
        iteration reads before binding them (:class:`LoopRebinds`); what
        they replaced is added back afterwards, so what follows the loop
        reads every value they held."""
        names = self._rebinds_memo.get(id(loop))
        if names is None:
            names = self._rebinds_memo[id(loop)] = loop_rebinds(loop)
        if not names:
            self._block(loop.body, env, implicit, variant)
            return
        rebinds = LoopRebinds(names)
        watch = self._watch
        # a read in the body sees the binding again on the next walk; only a
        # read before the loop (in an enclosing one) may now see another value
        read_before = frozenset(watch.values) if watch is not None else ()
        self._block(loop.body, env, implicit, variant, rebinds=rebinds)
        watch = self._watch
        for name, old in rebinds.replaced.items():
            now = env.get(name)
            merged = env[name] = old if now is None else now | old
            if watch is not None and not watch.changed and name in read_before:
                seen = watch.values[name]
                if merged is not seen and merged != seen:
                    watch.changed = True

    def _bind_back(self, env: dict, held: dict) -> None:
        """Add back what a loop's target held before its header bound it
        (:func:`_unbind`); a read before the loop that now sees another
        value makes the walk of an enclosing loop go round again."""
        watch = self._watch
        for key, old in held.items():
            now = env.get(key)
            merged = env[key] = old if now is None else now | old
            if watch is not None and not watch.changed and key in watch.values:
                seen = watch.values[key]
                if merged is not seen and merged != seen:
                    watch.changed = True


class _WatchedFlow(Flow):
    """A :class:`Flow` that tells its :class:`ReadWatch` when a write
    changes what a variable read before holds."""

    __slots__ = ("watch",)

    def __init__(self, env: dict, implicit, watch: ReadWatch, *, accumulate: bool,
                 rebinds: Optional[LoopRebinds] = None, element_stores: frozenset = frozenset(), alike=None):
        Flow.__init__(self, env, implicit, accumulate=accumulate, in_place=True, rebinds=rebinds,
                      element_stores=element_stores, alike=alike)
        self.watch = watch

    def write(self, name, atoms: frozenset, strong: bool = True, own: Optional[frozenset] = None) -> None:
        Flow.write(self, name, atoms, strong, own)
        watch = self.watch
        if not watch.changed and name in watch.values:
            seen = watch.values[name]
            now = self.out[name]
            if now is not seen and now != seen:
                watch.changed = True


class _FactsMark:
    """What a :class:`Variant` held at one point, to go back to."""

    __slots__ = ("sites", "fields", "field_types", "returns", "return_parts", "return_keys", "return_own", "raised",
                 "raised_tree", "escapes", "return_present", "return_none")

    def __init__(self, variant: Variant):
        self.sites, self.fields, self.field_types = len(variant.sites), len(variant.fields), len(variant.field_types)
        self.returns, self.return_parts, self.return_own = variant.returns, variant.return_parts, variant.return_own
        self.return_keys, self.return_present = variant.return_keys, variant.return_present
        self.return_none = variant.return_none
        self.raised, self.raised_tree, self.escapes = variant.raised, variant.raised_tree, variant.escapes

    def restore(self, variant: Variant) -> None:
        del variant.sites[self.sites:]
        del variant.fields[self.fields:]
        del variant.field_types[self.field_types:]
        variant.returns, variant.return_parts, variant.return_own = self.returns, self.return_parts, self.return_own
        variant.return_keys, variant.return_present = self.return_keys, self.return_present
        variant.return_none = self.return_none
        variant.raised, variant.raised_tree, variant.escapes = self.raised, self.raised_tree, self.escapes
