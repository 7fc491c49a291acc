"""Guard classification: the conditions deciding whether a call site runs, each
with the kind of guard it is.

A decision a site is control dependent on is a *branch* when the site sits
inside the decision's arm, an *early exit* when the decision sends a rank out
of the block before the site (``if c: return``, an ``assert``, a loop that
``break``s), a *loop* when the site repeats once per iteration, and an
*exception* when an exception edge decides it.  Inline decisions
(ternaries, short-circuits, comprehension filters) come from the call's own
expression.  The conditions' atoms come from the dataflow; whether they
differ between ranks is the whole-tree pass's question.
"""

from __future__ import annotations

import ast
import dataclasses
from typing import Optional

from .jobkills import exceptions_hang
from ..model import Span
from ..presets import KIND_GROUP_MEMBERSHIP, KIND_RANK_ID
from . import cfg as cfgmod
from .alternatives import Alternatives
from .astwalk import DEFINITIONS, LOOPS, walk
from .atoms import EMPTY, Source, made
from .bindings import element_stores, local_assignments
from .correlated import deciding
from .dataflow import Dataflow
from .evaluator import Evaluator
from .exceptionguards import ExceptionGuards
from .feasibility import first_rank_facts
from .memosyntax import names_only_test
from .orders import SetOrders, reads_element
from .records import Cond
from .roles import equality_tree
from .namereach import bound_in, bound_names, declared_shared
from .presence import none_test, presence_test
from .registries import first_use_source, registry_of
from .grouptests import tests_membership, tests_own_group
from .spreadlengths import statement_holding
from .syntax import ReadNames, calls_in_order, first_exit, first_exit_in, plain_dotted, unparse, whole_text
from .threads import BackgroundThreads
from .vocabulary import ALL_MODES_ALL_DIMS, TORCH_DISTRIBUTED_RECEIVERS


#: how many locals :meth:`Guards._choice` follows back from a collective's group argument
_CHOICE_DEPTH = 2

#: the nodes a key :func:`_entry_just_stored` compares may hold: names and constants, in an f-string or a tuple
#: (no call, attribute or operator, which may run code of their own between the store and the read)
_PLAIN_KEY_NODES = frozenset({ast.Name, ast.Constant, ast.JoinedStr, ast.FormattedValue, ast.Tuple, ast.Load})

#: the nodes where a statement hands control away mid-way (another task, the generator's caller), so that code the
#: function does not show may run between a store and the read :func:`_entry_just_stored` pairs it with
_SUSPENDS = frozenset({ast.Await, ast.Yield, ast.YieldFrom})

#: the statement an inline condition belongs to (else a comprehension's)
_INLINE_STATEMENTS = {ast.IfExp: "ifexp", ast.BoolOp: "boolop"}


class Guards(ExceptionGuards):
    """The conditions of the call sites of one function's variant;
    ``index`` maps ``id(call)`` to the call's site index."""

    def __init__(self, evaluator: Evaluator, flow: Dataflow, index: dict):
        self.info = evaluator.info
        self.evaluator = evaluator
        self.flow = flow
        self.index = index
        self.alternatives = Alternatives(self.info, index, flow.graph.crashing_arm)
        self.read_names = ReadNames()
        self._tests: dict = {}  # (test's CFG node, whether the site is in its arms) -> Cond
        self._if_tests: dict = {}  # (line, text) of an ``if``'s Cond -> its test (the text may be cut short)
        self._finally: dict = {}  # id(try statement) -> the condition of a call in its ``finally`` (or None)
        self._callee_escapes: dict = {}  # id(statement) -> (it, callee_escapes' answer)
        self._retries: dict = {}  # id(failing statement) -> (it, retry_facts' answer)
        self._set_orders = None  # SetOrders of the function, made when a loop first asks
        self._threads = BackgroundThreads(self.info)  # what a background thread adds to the sites

    def conds_of(self, site, node: cfgmod.Node, inline: list, env: dict,
                 group_argument: Optional[ast.expr] = None) -> tuple:
        """Every condition deciding whether ``site`` (made at ``node``) runs,
        innermost inline conditions first, then (a collective handed its
        group as ``group_argument``) what decides which group it runs over."""
        conds = tuple(self._inline_conds(inline, env, node.stmt)) + tuple(self._node_conds(node))
        if exceptions_hang(self.info):
            # the outermost reasons: the site's own tests decide first
            conds = conds + self.callee_escapes(node.stmt)
        escaped = self._finally_cond(node)
        if escaped is not None:
            conds = conds + (escaped,)
        conds = conds + self._threads.conds_of(site)
        ctx = self.info.ctx
        receiver = site.callee.rsplit(".", 1)[0] if "." in site.callee else ""
        color = ctx.comm_colors.get(receiver) if site.collective else None
        if color is not None:
            conds = self._uniform_in_color(conds, color, node)
        members = None
        if site.collective and site.collective.group.startswith("group:"):
            members = ctx.group_members.get(site.collective.group[len("group:"):])
            if members is not None:
                conds = tuple(c for c in (without_membership_operand(c, members, self._if_tests.get((c.line, c.text)))
                                          for c in conds) if c is not None)
        if ctx.group_member_texts:
            conds = tuple(with_membership_armed(c, members, self._if_tests.get((c.line, c.text))) for c in conds)
        if site.collective and site.fix is not None:
            own = {text for text in (site.fix.group_expr, site.fix.receiver)
                   if text and text not in TORCH_DISTRIBUTED_RECEIVERS}
            if own:
                conds = tuple(c for c in (without_own_group_operand(c, own, self._if_tests.get((c.line, c.text)))
                                          for c in conds) if c is not None)
        if group_argument is not None:
            # after the membership arming: a group picked by membership in its own rank list is
            # every member's same group (KIND_GROUP_MEMBERSHIP stays alike in the choice)
            conds = conds + self._group_choice(group_argument, env, node.stmt)
        return conds

    def _group_choice(self, argument: ast.expr, env: dict, stmt: ast.AST) -> tuple:
        """The condition the group handed to a collective puts on it where the
        call chooses among groups (:meth:`_choice`: ``g = dist.group.WORLD if
        rank == 0 else cpu_world``, ``groups[rank % 2]``).  A rank waits in the
        communicator of the group it holds, so ranks holding different groups
        never meet, as if each had taken its own arm of an ``if`` holding one
        collective per group; the whole-tree pass asks whether what chose
        differs over the collective's group, as it asks of any test.  The
        value of a group the function is handed or reads whole (a parameter,
        a field, a helper's return) is not asked: what made it (``if rank in
        ranks: self.group = g``, its own group by membership; an exit before
        the store) says whether a rank holds it, rarely which one.  A None
        alternative of a local the collective's ``if`` tests for presence
        (:func:`_present_where_run`) names no group it runs over."""
        atoms, alternatives = self._choice(argument, env, _CHOICE_DEPTH)
        if not atoms:
            return ()
        info = self.info
        none_skipped = type(argument) is ast.Name and _present_where_run(info, argument.id, stmt)
        chosen = _named_groups(info, alternatives, none_skipped)
        return (Cond("branch", atoms, unparse(argument), getattr(argument, "lineno", 0), Span.of(argument),
                     statement="group", chosen_groups=chosen),)

    def _choice(self, expr: ast.expr, env: Optional[dict], depth: int, followed: frozenset = frozenset()) -> tuple:
        """``(atoms, alternatives)`` of the group ``expr`` names, ``depth`` locals deep.  The atoms decide
        which alternative a rank holds: a conditional expression's test, a subscript's index that is no
        constant, and for a local bound to several texts or in a loop the decisions each binding runs under,
        read in the variables there.  The alternatives (:func:`_named_groups`; a rank waits with the group
        each names) are both arms of a conditional expression, the elements of a display a subscript picks
        from, what each binding of a local binds, else ``expr``.  Without ``env`` (a display's elements, a
        binding the flow graph holds no node for) the alternatives alone."""
        t = type(expr)
        if t is ast.IfExp:
            atoms = EMPTY if env is None else self.evaluator.truth(expr.test, env)
            body_atoms, body = self._choice(expr.body, env, depth, followed)
            orelse_atoms, orelse = self._choice(expr.orelse, env, depth, followed)
            return atoms | body_atoms | orelse_atoms, body + orelse
        if t is ast.Subscript:
            store = _entry_just_stored(self.info, expr)
            if store is not None:  # the value stored there: no pick among the container's entries
                flow = self.flow
                at_store = None if env is None else flow.envs.get(flow.graph.node_of(store), {})
                return self._choice(store.value, at_store, depth, followed)
            constant = env is None or type(expr.slice) is ast.Constant
            index = EMPTY if constant else self.evaluator.eval(expr.slice, env)
            atoms, alternatives = self._choice(expr.value, env, depth, followed)
            if type(expr.value) is ast.Name and depth > 0:  # an entry stored in place binds what it picks
                for store_atoms, at_store, value in _stored_entries(self, expr.value.id, env is not None):
                    value_atoms, value_alternatives = self._choice(value, at_store, depth - 1, followed)
                    atoms, alternatives = atoms | store_atoms | value_atoms, alternatives + value_alternatives
            return index | atoms, alternatives
        if t is ast.List or t is ast.Tuple or t is ast.Dict:
            elements = expr.values if t is ast.Dict else expr.elts  # each a choice too: ``[tp if r else pp][0]``
            chosen = [self._choice(element, env, depth, followed) for element in elements if element is not None]
            return EMPTY.union(*(atoms for atoms, _ in chosen)), [one for _, some in chosen for one in some]
        assignments = local_assignments(self.info.func, expr.id, unpacked=True) \
            if t is ast.Name and depth > 0 and expr.id not in followed else None
        if not assignments:
            return EMPTY, [expr]
        flow = self.flow
        several = env is not None and len({unparse(value) for _statement, value in assignments}) > 1
        atoms = EMPTY
        alternatives = []
        followed = followed | {expr.id}  # (a plain copy, ``h = g``, uses up no depth below)
        for statement, value in assignments:
            n = None if env is None else flow.graph.node_of(statement)
            if n is not None and (several or _in_loop(self.info, statement)):
                atoms |= flow.implicit(n)  # (a loop's passes bind it to what each pass reads)
            value_atoms, value_alternatives = self._choice(value, None if n is None else flow.envs.get(n, {}),
                                                           depth if type(value) is ast.Name else depth - 1, followed)
            atoms |= value_atoms
            alternatives += value_alternatives
        return atoms, alternatives

    # -- inline: ternaries, short-circuits, comprehensions ------------------------------
    def _inline_conds(self, inline, env, stmt) -> list:
        index = self.index
        conds = []
        for kind, expr, owner, _side in reversed(inline):
            if kind == "loop":
                # a comprehension runs once per element, in its iterable's order
                atoms = self.evaluator.trip_count(expr, env)
                order = self._set_order(expr)
                if order and reads_element(owner, None):
                    atoms = atoms | order
            else:
                atoms = self.evaluator.truth(expr, env)
            body_sites, else_sites, two_sided = (), (), False
            alternatives = None
            if isinstance(owner, ast.IfExp):
                two_sided = True
                body_sites = tuple(index[id(c)] for c, _ in calls_in_order(owner.body) if id(c) in index)
                else_sites = tuple(index[id(c)] for c, _ in calls_in_order(owner.orelse) if id(c) in index)
                alternatives = (body_sites, else_sites)
            conds.append(Cond(kind, atoms, unparse(expr), getattr(expr, "lineno", owner.lineno), Span.of(owner),
                              body_sites=body_sites, else_sites=else_sites, two_sided=two_sided,
                              alternatives=alternatives,
                              statement=_INLINE_STATEMENTS.get(type(owner), "comprehension"),
                              arm_lines=_operand_arm_lines(owner, stmt), names_only=names_only_test(expr)))
        return conds

    # -- decisions of the CFG -------------------------------------------------------------
    def _node_conds(self, node: cfgmod.Node) -> list:
        flow = self.flow
        conds = []
        stmt = node.stmt
        closure = flow.closures.get(node.id, ())
        going_on = self._going_on(node.id, closure)
        if going_on:
            closure = list(closure) + list(going_on)
        for d, label in deciding(self.info, stmt, flow.graph.nodes, closure):
            dnode = flow.graph.nodes[d]
            if dnode.kind == cfgmod.STMT and any(out == cfgmod.ESCAPE for _, out in dnode.succs):
                # the failing work runs only where its enclosing ``if`` arms hold
                conds.append(self._exception(dnode.stmt, flow.implicit(d), "escape"))
                continue
            atoms = flow.cond_atoms(d)
            if self._failure_decides(node.id, d, label, closure):
                if self._joined_after(dnode.stmt, stmt):
                    continue
                atoms = self.evaluator.raised_atoms(dnode, flow.envs.get(d, {}))
                conds.append(self._exception(dnode.stmt, atoms))
            elif dnode.kind == cfgmod.TEST:
                if flow.graph.escaping and not self.info.inside(stmt, dnode.stmt) and first_exit(dnode.stmt) is None:
                    continue  # decided by the failing work in its arm (an ``escape`` condition), not by an exit
                cond = self._test(stmt, d, dnode.stmt, atoms)
                if going_on and (d, label) in going_on:
                    # the ranks taking the arm leave for good: no pairing of this pass's arms (by role, or
                    # by the sequences of its two sides) meets the next pass's collectives the others run
                    cond = dataclasses.replace(cond, going_on_sites=going_on[(d, label)], role_arms=None,
                                               alternatives=None)
                conds.append(cond)
            elif dnode.kind == cfgmod.LOOP:
                conds.append(self._loop(stmt, dnode.stmt, atoms))
            elif dnode.kind == cfgmod.ASSERT:
                dstmt = dnode.stmt
                conds.append(Cond("early-exit", atoms, unparse(dstmt.test), dstmt.lineno, Span.of(dstmt),
                                  exit_text=unparse(dstmt).split("\n")[0],
                                  statement="assert", unhandled=flow.graph.leaves_uncaught(d),
                                  names_only=names_only_test(dstmt.test)))
            elif dnode.kind == cfgmod.CASE:
                conds.append(self._case(stmt, dnode.stmt, atoms))
            elif dnode.stmt is not None:  # a statement with exception edges
                if not self._joined_after(dnode.stmt, stmt):
                    conds.append(self._exception(dnode.stmt, atoms))
        return conds

    def _going_on(self, n: int, closure) -> dict:
        """(test, label) -> the loop's other sites, for the tests whose arm leaving their loop holds
        node ``n`` on every path out (:func:`exitarms.exit_arm_deciders`): the ranks that take the arm
        run it on this pass, the others go on to those sites.  Whether any of them issues a
        collective is the whole-tree pass's question (where none does, every rank runs the arm once,
        on whichever pass it leaves, and the sequences agree)."""
        leaving = self.flow.exit_arm_deciders().get(n)
        if not leaving:
            return {}
        nodes, sites_in = self.flow.graph.nodes, self.alternatives.sites_in
        found = {}
        for d, label, header in leaving:
            if (d, label) in closure:
                continue
            test = nodes[d].stmt
            arm = set(sites_in(test.body if label else test.orelse))
            others = tuple(site for site in sites_in(nodes[header].stmt.body) if site not in arm)
            if others:
                found[(d, label)] = others
        return found

    def _test(self, stmt, d: int, dstmt: ast.If, atoms) -> Cond:
        """The condition of the ``if`` at CFG node ``d`` for a site at ``stmt``: made once per test and
        side (a branch for the sites in its arms, an early exit for those after it) and shared by every
        site it decides, since it depends on nothing else."""
        key = (d, self.info.inside(stmt, dstmt) and stmt is not dstmt)
        found = self._tests.get(key)
        if found is None:
            env = self.flow.envs.get(d, {})
            atoms = atoms | first_use_source(self.info.ctx, dstmt) | self.evaluator.membership_reads(dstmt.test, env)
            found = self._tests[key] = self._if(stmt, dstmt, atoms, env)
            self._if_tests[found.line, found.text] = dstmt.test
        return found

    def _if(self, stmt, dstmt: ast.If, atoms, env) -> Cond:
        alternatives = self.alternatives
        operator, operands, first_rank = self._operands(dstmt.test, env)
        if self.info.inside(stmt, dstmt) and stmt is not dstmt:
            body_sites = alternatives.sites_in(dstmt.body)
            else_sites = alternatives.sites_in(dstmt.orelse)
            if not dstmt.orelse:
                partner = alternatives.complement_partner(dstmt)
                if partner is not None:
                    else_sites = alternatives.sites_in(partner.body)
            return Cond("branch", atoms, unparse(dstmt.test), dstmt.test.lineno, Span.of(dstmt),
                        body_sites=body_sites, else_sites=else_sites, two_sided=True,
                        alternatives=alternatives.branch_alternatives(dstmt), statement="if",
                        presence=self._presence(dstmt.test, dstmt.body, dstmt.orelse),
                        operator=operator, operands=self._with_presence(operands, dstmt.body, dstmt.orelse),
                        first_rank=first_rank, role_arms=alternatives.role_arms(dstmt),
                        equality_tree=equality_tree(alternatives, self.evaluator, self.info, dstmt, env),
                        names_only=names_only_test(dstmt.test))
        exit_stmt = first_exit(dstmt)
        graph = self.flow.graph
        leaves_loop = self._leaves_loop(exit_stmt, dstmt)
        skipped = self._skipped_by_exit(dstmt, exit_stmt)
        return Cond("early-exit", atoms, unparse(dstmt.test), dstmt.test.lineno,
                    Span.of(exit_stmt) if exit_stmt else Span.of(dstmt),
                    exit_text=unparse(exit_stmt).split("\n")[0] if exit_stmt else "",
                    two_sided=True, alternatives=alternatives.branch_alternatives(dstmt),
                    statement="if", leaves_loop=leaves_loop,
                    leaves_unbounded_loop=leaves_loop and self._leaves_unbounded_loop(exit_stmt, dstmt),
                    skipped_lines=_lines_left(exit_stmt, leaves_loop, skipped),
                    unhandled=type(exit_stmt) is ast.Raise and graph.leaves_uncaught(graph.node_of(exit_stmt)),
                    presence=self._presence(dstmt.test, (), skipped),
                    operator=operator, operands=self._with_presence(operands, (), skipped),
                    first_rank=first_rank, role_arms=alternatives.role_arms(dstmt),
                    retry=self._arms_retry(dstmt) if exit_stmt is None else None,
                    names_only=names_only_test(dstmt.test))

    # -- what a consensus on the test would change (facts for the fix rules) -----------
    def _operands(self, test, env) -> tuple:
        """``(operator, ((span, atoms, node), ...), first_rank_facts(test))`` of an ``and``/``or`` test
        (the node is replaced by the operand's presence facts below)."""
        if not isinstance(test, ast.BoolOp):
            return "", (), ()
        evaluator = self.evaluator
        operands = tuple((Span.of(value), evaluator.eval(value, env) | evaluator.membership_reads(value, env), value)
                         for value in test.values)
        return "and" if isinstance(test.op, ast.And) else "or", operands, first_rank_facts(test, self.flow.fold, self.flow.info.ctx.size_reads)

    def _with_presence(self, operands, when_true, when_false) -> tuple:
        """Each operand's ``(span, atoms, presence facts)``: when only one
        operand differs between ranks, a consensus agrees on it alone."""
        return tuple((span, atoms, self._presence(node, when_true, when_false)) for span, atoms, node in operands)

    def _presence(self, test, when_true, when_false) -> Optional[tuple]:
        """The presence test's facts (see :attr:`Cond.presence`).  Under a
        consensus a rank whose own test is false acts as if it held: a
        branch's rank runs the arm meant for the other kind of value, and an
        exit's rank skips what follows.  ``when_true``/``when_false``: the
        code whose reads matter when the test holds for a present value, and
        when it holds for an absent one (a branch: its body and its else; an
        exit: nothing, and what it skips -- a rank made to exit without the
        value loses nothing, one that holds it would leave it unhandled)."""
        found = presence_test(test)
        if found is None:
            return None
        text, holds_when_present = found
        decided = when_true if holds_when_present else when_false
        return text, holds_when_present, self.read_names.reads(decided, text)

    def _skipped_by_exit(self, guard, exit_stmt) -> list:
        """The statements a rank skips when it takes the exit: what follows
        the guard up to the loop it leaves or continues, or to the end of the
        function."""
        skipped = []
        info = self.info
        stop_at_loop = isinstance(exit_stmt, (ast.Break, ast.Continue))
        node = guard
        while node is not None:
            block = info.blocks.get(id(node), ())
            for i, child in enumerate(block):
                if child is node:
                    skipped.extend(block[i + 1:])
                    break
            parent = info.parents.get(id(node))
            if stop_at_loop and type(parent) in LOOPS:
                break
            node = parent
        return skipped

    def _leaves_unbounded_loop(self, exit_stmt, guard) -> bool:
        """Whether the loop the exit leaves has a constant true test (an
        event loop: ``while True``)."""
        parent = self.info.parents.get(id(guard))
        while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            if isinstance(parent, (ast.For, ast.AsyncFor)):
                return False
            if isinstance(parent, ast.While):
                return isinstance(parent.test, ast.Constant) and bool(parent.test.value)
            parent = self.info.parents.get(id(parent))
        return False

    def _loop(self, stmt, dstmt, atoms) -> Cond:
        tested = dstmt.test if isinstance(dstmt, ast.While) else dstmt.iter
        text, line, names_only = unparse(tested), tested.lineno, names_only_test(tested)
        if self.info.inside(stmt, dstmt) and stmt is not dstmt:
            order = self._set_order(dstmt.iter) if not isinstance(dstmt, ast.While) else None
            if order and reads_element(dstmt, stmt):
                atoms = atoms | order
            return Cond("loop", atoms, text, line, Span.of(dstmt),
                        statement="while" if isinstance(dstmt, ast.While) else "for", names_only=names_only)
        exit_stmt = first_exit(dstmt, loop=True)
        return Cond("early-exit", atoms, text, line, Span.of(exit_stmt) if exit_stmt else Span.of(dstmt),
                    exit_text=unparse(exit_stmt).split("\n")[0] if exit_stmt else "",
                    statement="while" if isinstance(dstmt, ast.While) else "for", names_only=names_only)

    def _case(self, stmt, case: ast.match_case, atoms) -> Cond:
        text = unparse(case.pattern)
        if self.info.inside(stmt, case):
            return Cond("branch", atoms, f"case {text}", case.pattern.lineno, Span.of(case.pattern),
                        statement="match")
        exit_stmt = first_exit_in(case.body)
        return Cond("early-exit", atoms, f"case {text}", case.pattern.lineno,
                    Span.of(exit_stmt) if exit_stmt else Span.of(case.pattern),
                    exit_text=unparse(exit_stmt).split("\n")[0] if exit_stmt else "", statement="match")

    def _set_order(self, iterable) -> frozenset:
        """What a loop over ``iterable`` runs per process: a set's order
        (:mod:`~cslint.analysis.orders`), a registry's entries (:mod:`~cslint.analysis.registries`)."""
        if self._set_orders is None:
            self._set_orders = SetOrders.of_function(self.info)
        return self._set_orders.order_of(iterable) | registry_of(self.info.ctx, iterable)

    def _leaves_loop(self, exit_stmt, guard) -> bool:
        """Whether an exit taken at ``guard`` leaves a loop of this function."""
        if isinstance(exit_stmt, ast.Break):
            return True
        if isinstance(exit_stmt, ast.Continue):
            return False
        return _in_loop(self.info, guard)

    # -- communicators split by a color ------------------------------------------------------
    def _uniform_in_color(self, conds, color, node) -> tuple:
        """Members of a communicator made by ``Split(color, ...)`` share the
        color: a test that depends on the rank only through the color is
        uniform over that communicator."""
        flow = self.flow
        texts = {ast.unparse(color)}
        if isinstance(color, ast.Name):
            texts.add(color.id)
        decisions = {}
        for d, _label in flow.closures.get(node.id, ()):
            dnode = flow.graph.nodes[d]
            if dnode.kind == cfgmod.TEST and isinstance(dnode.stmt, ast.If):
                decisions[dnode.stmt.test.lineno, unparse(dnode.stmt.test)] = (dnode.stmt.test, flow.envs.get(d, {}))
        with self.evaluator.uniform(texts):
            out = []
            for cond in conds:
                found = decisions.get((cond.line, cond.text))
                if found is not None:
                    test, env = found
                    cond = dataclasses.replace(cond, atoms=self.evaluator.eval(test, env))
                out.append(cond)
            return tuple(out)


def _in_loop(info, stmt) -> bool:
    """Whether ``stmt`` lies in a loop of the function of ``info``."""
    parent = info.parents.get(id(stmt))
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        if type(parent) in LOOPS:
            return True
        parent = info.parents.get(id(parent))
    return False


def _named_groups(info, alternatives: list, none_skipped: bool) -> tuple:
    """The groups the alternatives :meth:`Guards._choice` finds name, sorted:
    each the group its text names, ``None`` the world, unless
    ``none_skipped``: the value is known not to be None where the
    collective runs, so no None alternative reaches it."""
    named = set()
    for alternative in alternatives:
        if type(alternative) is not ast.Constant or alternative.value is not None:
            named.add(info.ctx.group_of_text(unparse(alternative)))
        elif not none_skipped:
            named.add("world")
    return tuple(sorted(named))


def _stored_entries(guards: Guards, name: str, in_flow: bool) -> list:
    """``(atoms, env, value)`` of each value the function of ``guards``
    stores into an entry of the container ``name`` in place
    (``comm["group"] = pair``, ``tables[k]["group"] = g``,
    ``comm.update(group=g)``: :func:`~cslint.analysis.bindings.element_stores`):
    each store binds the entry a later read picks as a binding of a local
    does, so the decisions it runs under and a key that is no constant decide
    which value a rank reads there (``atoms``), and each value stored is an
    alternative, read in the variables there (``env``).  ``in_flow``: the
    read has an environment (else no atoms and no environment)."""
    info, flow = guards.info, guards.flow
    found = []
    for node, keys, values in element_stores(info.func, name):
        statement = node if isinstance(node, ast.stmt) else statement_holding(info, node)
        n = flow.graph.node_of(statement) if in_flow and statement is not None else None
        at_store = None if n is None else flow.envs.get(n, {})
        atoms = EMPTY
        if n is not None:
            atoms = flow.implicit(n)
            for key in keys:
                if type(key) is not ast.Constant:
                    atoms = atoms | guards.evaluator.eval(key, at_store)
        found += [(atoms, at_store, value) for value in values]
    return found


def _entry_just_stored(info, read: ast.Subscript) -> Optional[ast.Assign]:
    """The statement right before the one holding ``read`` where it stores
    the entry ``read`` reads (``registry[name] = init_group(...)``, then
    ``dist.barrier(group=registry[name])``), or None.  Nothing runs between
    that store and the read, so the entry read is the value stored, whatever
    key (this rank's own id) it is stored under, and what the value names
    decides which group a rank holds.  Only a container that is a name or
    its attributes and a key of names and constants (an f-string or a tuple
    of them) are compared, by their text; the statement holding the read
    may call nothing before it (each call there must hold the read in its
    arguments), suspend nowhere (an ``await`` or ``yield``: another task or
    the generator's caller may rewrite the entry meanwhile) nor bind the
    names the container and key read."""
    if plain_dotted(read.value) is None \
            or any(type(node) not in _PLAIN_KEY_NODES for node in walk(read.slice)):
        return None
    statement = statement_holding(info, read)
    block = info.blocks.get(id(statement)) if statement is not None else None
    if not block:
        return None
    place = next(i for i, stmt in enumerate(block) if stmt is statement)
    store = block[place - 1] if place else None
    if type(store) is not ast.Assign or len(store.targets) != 1 or type(store.targets[0]) is not ast.Subscript:
        return None
    target = store.targets[0]
    if unparse(target.value) != unparse(read.value) or unparse(target.slice) != unparse(read.slice):
        return None
    read_names = {node.id for node in walk(read) if type(node) is ast.Name}
    if read_names & bound_in(info, statement):
        return None
    for node in walk(statement):
        t = type(node)
        if t is ast.Call and not any(inner is read for inner in walk(node)) or t in _SUSPENDS \
                or t is ast.comprehension and node.is_async:
            return None
    return store


def _present_where_run(info, name: str, stmt: ast.AST) -> bool:
    """Whether the local ``name`` is never None where ``stmt`` runs: ``stmt``
    lies in the body of an ``if`` whose test, or an operand of its ``and``,
    is ``name`` or ``name is not None``, and nothing rebinds ``name`` in that
    body or in the test (a binding anywhere in the body counts, before or
    after ``stmt``: a loop in it comes back).  A name the function declares
    ``global``, or a function nested in it ``nonlocal``, is never trusted: a
    call between the test and ``stmt`` may rebind it."""
    if name in declared_shared(info):
        return False
    child, parent = stmt, info.parents.get(id(stmt))
    while parent is not None and type(parent) not in DEFINITIONS:
        if type(parent) is ast.If and _holds_only_if_present(parent.test, name) \
                and any(s is child for s in parent.body):
            return name not in bound_names(parent.test) and not any(name in bound_in(info, s) for s in parent.body)
        child, parent = parent, info.parents.get(id(parent))
    return False


def _holds_only_if_present(test: ast.expr, name: str) -> bool:
    """Whether ``test`` holds only where the local ``name`` is not None:
    ``name``, ``name is not None``, or an ``and`` with one of them."""
    if type(test) is ast.BoolOp and type(test.op) is ast.And:
        return any(_holds_only_if_present(value, name) for value in test.values)
    if type(test) is ast.Name:
        return test.id == name
    return none_test(test) == (name, False)


def without_own_group_operand(cond: Cond, own: set, test: Optional[ast.expr]) -> Optional[Cond]:
    """``cond`` without the operands of its ``and``/``or`` test that only
    ask whether this rank belongs to the collective's own group (every
    member answers alike, a non-member takes no part): what the other
    operands read decides; None when the whole test asks only that.
    ``test``: the ``if`` test ``cond`` was made of, read whole (``cond.text``
    is cut short), None for any other condition (which has no operands)."""
    return _without_operands(cond, test, lambda text: tests_own_group(text, own))


def without_membership_operand(cond: Cond, members: str, test: Optional[ast.expr]) -> Optional[Cond]:
    """``cond`` without the operands of its test (or None for the whole
    test) that ask whether this rank is in ``members``, the text of the
    list the collective's group was made from (``rank in ranks`` of
    ``new_group(ranks)``): alike on every member, and a non-member takes
    no part.  ``test`` as for :func:`without_own_group_operand`."""
    return _without_operands(cond, test, lambda text: tests_membership(text, members))


def with_membership_armed(cond: Cond, members: Optional[str], test: Optional[ast.expr]) -> Cond:
    """``cond`` reading each membership value it holds
    (``KIND_GROUP_MEMBERSHIP``: ``member = rank in ranks``, ``n = 1`` under
    it; :meth:`~cslint.analysis.structure.StructureReads.membership_value`)
    as this rank's id, unless the list tested is ``members``, the one the
    site's collective group was made from: alike on that group's members
    only, so a collective over the world or over any other group (or a call
    whose collective the whole-tree pass finds) parts the ranks under it.
    A test that is itself the membership test (``test``, the ``if`` test
    ``cond`` was made of) already reads the rank
    (:meth:`~cslint.analysis.structure.StructureReads.membership_reads`).
    Only the membership values the condition holds itself count (a value
    handed to a call, or stored and read back elsewhere, stays alike)."""
    atoms = _membership_armed(cond.atoms, members, test)
    operands = tuple((span, _membership_armed(held, members, test), *rest) for span, held, *rest in cond.operands)
    if atoms is cond.atoms and all(new[1] is old[1] for new, old in zip(operands, cond.operands)):
        return cond
    return dataclasses.replace(cond, atoms=atoms, operands=operands)


def _membership_armed(atoms: frozenset, members: Optional[str], test: Optional[ast.expr]) -> frozenset:
    """``atoms`` with a rank id source beside each membership value of a
    list other than ``members`` (see :func:`with_membership_armed`)."""
    armed = [made(Source, ("S", KIND_RANK_ID, atom.text, atom.path, atom.line, ALL_MODES_ALL_DIMS, atom.whole, ()))
             for atom in atoms
             if atom.tag == "S" and atom.kind == KIND_GROUP_MEMBERSHIP
             and not (members is not None and tests_membership(atom.text, members))
             and not _tests_in(test, atom)]
    return atoms | frozenset(armed) if armed else atoms


def _tests_in(test: Optional[ast.expr], marker) -> bool:
    """Whether the membership test ``marker`` stands for is part of ``test``."""
    return test is not None and any(type(node) is ast.Compare and node.lineno == marker.line
                                    and unparse(node) == marker.text for node in ast.walk(test))


def _without_operands(cond: Cond, test: Optional[ast.expr], asks_membership) -> Optional[Cond]:
    """``cond`` without the operands of its ``and``/``or`` test ``test``
    whose text ``asks_membership``; None when the whole test does."""
    if asks_membership(cond.text if test is None else whole_text(test)):
        return None
    if not cond.operands or type(test) is not ast.BoolOp or len(test.values) != len(cond.operands):
        return cond
    kept, dropped = [], EMPTY
    for value, operand in zip(test.values, cond.operands):
        if asks_membership(whole_text(value)):
            dropped = dropped | operand[1]
        else:
            kept.append(operand)
    if len(kept) == len(cond.operands):
        return cond
    if not kept:
        return None
    atoms = EMPTY
    for operand in kept:
        atoms = atoms | operand[1]
    return dataclasses.replace(cond, atoms=atoms | (cond.atoms - dropped), operands=tuple(kept))


def _lines_left(exit_stmt, leaves_loop: bool, skipped: list) -> tuple:
    """:attr:`Cond.skipped_lines` of an ``if`` whose arm leaves by
    ``exit_stmt``: the lines of the statements it skips where the exit
    returns or raises outside any loop (a rank taking it is gone for good),
    else ()."""
    if not isinstance(exit_stmt, (ast.Return, ast.Raise)) or leaves_loop:
        return ()
    return tuple((stmt.lineno, stmt.end_lineno) for stmt in skipped)


def _operand_arm_lines(owner, stmt) -> tuple:
    """For an operand of the ``and``/``or`` that is the whole test of the
    ``if`` ``stmt``: the lines of the arm only the ranks on one side of the
    operand run (``and``: its body, where every operand held; ``or``: its
    ``else``, where none did), as ``(first, last)``; else ()."""
    if type(owner) is not ast.BoolOp or type(stmt) is not ast.If or stmt.test is not owner:
        return ()
    arm = stmt.body if type(owner.op) is ast.And else stmt.orelse
    if not arm:
        return ()
    return ((arm[0].lineno, arm[-1].end_lineno or arm[-1].lineno),)
