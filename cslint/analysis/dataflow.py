"""The CFG dataflow of a function that can reach a collective: its control-flow
graph under one mode assignment, control dependence, and the atoms of every
variable at every node (may-union, with implicit flow from the decisions a
node is control dependent on)."""

from __future__ import annotations

import ast
import heapq
from functools import partial
from typing import Optional

from .jobkills import exceptions_hang
from . import cfg as cfgmod
from .controldependence import control_closure, control_dependence, postdominators, reachable, reverse_postorder
from .armexits import arm_exits, leaving_tests, rejoining_tests
from .arms import ArmIndex, ArmReads, mentioned_names as _mentioned_names, names_bound as _names_bound, selects_own_part
from .bindingflow import BindingFlow
from .atoms import CONTENTS, EMPTY, SIZED, WHOLE, project, whole
from .environment import EnvNumbers, fork, merge_into, snapshot
from .escapes import escaping_kind
from .exitarms import exit_arm_deciders
from .exitcalls import ExitCalls
from .evaluator import Evaluator
from .setfields import SetFields
from .structure import params_own
from .function import FunctionInfo
from .edges import Refinements
from .presence import vouched_presence
from .rootkept import has_root_returns, root_arm_assigns_alike
from .grouptests import single_rank_side
from .tensorarms import tensor_arms, tensor_deciders
from .skipped import SkippedBindings
from .stores import AlikeStores, store_alike
from .flows import Flow, RecordingFlow
from .transfer import Transfer


#: Steps per node the fixpoint takes before it watches for its state coming
#: back (:func:`_solve`); most functions settle in two passes.
WATCH_AFTER_PASSES = 3
#: Graphs larger than this are not watched: a snapshot of the state costs
#: nodes x variables (module-level code of thousands of statements and names).
WATCH_MAX_NODES = 500


class Dataflow(BindingFlow):
    """One function's CFG under one mode fold, solved: ``envs[n]`` holds the
    variables' atoms on entry to node ``n``."""

    def __init__(self, info: FunctionInfo, evaluator: Evaluator, fold):
        self.info, self.evaluator, self.fold = info, evaluator, fold
        graph = cfgmod.build_cfg(info.func, fold, escaping=escaping_kind(info.ctx) if exceptions_hang(info) else None,
                                exits=info.ctx.exit_exceptions, quiet=info.cfg_quiet, caught=info.ctx.caller_catches)
        ipdom = postdominators(graph)
        cd = control_dependence(graph, ipdom)
        self.graph, self.cd, self.live = graph, cd, reachable(graph)
        self._ipdom, self._exit_arms = ipdom, None  # exit_arm_deciders, made when first asked
        self.handler_nodes = handler_entries(graph, info.parents)  # node -> the handlers around it
        self._cond_cache, self._implicit_cache = {}, {}  # node -> (what it was worked out from, its atoms)
        self._parts: dict = {}  # decision -> whether it selects this rank's part (selects_own_part)
        self._binding_cache: dict = {}
        self._read_outside: dict = {}  # id(loop) -> names read outside it
        self._last: dict = {}  # node -> its last transfer (_Transfer), for a replay
        self._names: dict = {}  # node -> the names its own expressions mention
        self._single: dict = {}  # node -> whether only a group of one rank runs it (single_rank)
        self._deciders: dict = {}  # node -> the decisions whose atoms its implicit flow may read
        self._own_parts: dict = {}  # node -> the decisions selecting this rank's part it depends on
        self._tensor_arms: dict = {}  # node -> the if/else decisions both arms of which bind its name to a tensor
        self.tensor_index = None  # the function's TensorArms, made when first asked (tensorarms.tensor_arms)
        self._alike: dict = {}  # node -> the decisions every rank reading what it binds took alike
        self._read_alike: dict = {}  # node -> :meth:`tests_read_alike`
        self.arms = ArmIndex(info.parents, info.blocks)
        self.skipped = SkippedBindings()  # what a failure in a try body leaves unbound
        self.exit_calls = ExitCalls(info.parents, info.blocks)
        self.stores = AlikeStores(info.parents, info.blocks, info.element_stores) if info.element_stores else None
        self.transfer = Transfer(evaluator)
        self.fields = SetFields(info, graph, evaluator)  # the fields it sets and then reads itself
        closures = {n: control_closure(cd, n) for n in self.live}
        for n, owner in graph.finally_owner.items():
            if n in closures:
                closures[n] = self._finally_closure(n, owner, closures[n])
        #: node -> [(decision node, edge label)] it is (iteratively) control dependent on
        self.closures = closures
        self._arm_reads = ArmReads(graph, closures, self.live, info, self._names)
        self.leaving = leaving_tests(info, graph)  # decision node -> (label of the arm that leaves, loop or None)
        self.rejoining = rejoining_tests(info, graph)  # ``if`` test nodes whose arms fall through or leave the function
        self.arm_skips, self.arm_gates = arm_exits(self)  # tests a binding in their arm leaves out; ways out adding them
        #: the edges past an agreed None test, or that refine otherwise (:class:`VouchedEdges`); None: none
        self._vouched = VouchedEdges.find(self)
        self.envs: dict = {}
        self.loop_entry_envs: dict = {}  # ``for`` loop node -> what reaches it from outside (_note_loop_entry)
        _solve(self)
        self._vouched = None  # it refers back to this walk: no cycle outlives the solve
        self.exit_env = self.envs.get(graph.exit, {})

    # -- control dependence ------------------------------------------------------
    def exit_arm_deciders(self) -> dict:
        """node -> [(test, label, loop header)]: :func:`exitarms.exit_arm_deciders`, once."""
        if self._exit_arms is None:
            self._exit_arms = exit_arm_deciders(self.graph, self._ipdom)
        return self._exit_arms

    def _finally_closure(self, n, owner, closure):
        graph, cd = self.graph, self.cd
        try_entry = None
        for stmt in owner.body:
            try_entry = graph.node_of(stmt)
            if try_entry is not None:
                break
        outer = {d for d, _ in control_closure(cd, try_entry)} if try_entry is not None else set()
        kept = []
        for d, label in closure:
            stmt = graph.nodes[d].stmt
            in_final = any(self.info.inside(stmt, f) for f in owner.finalbody) if stmt is not None else False
            if in_final or d in outer:
                kept.append((d, label))
        return kept

    # -- what the decisions depend on ----------------------------------------------
    def cond_atoms(self, d: int) -> frozenset:
        """The atoms of decision ``d``'s condition, in the environment reaching it."""
        envs, cache = self.envs, self._cond_cache  # (``in`` and a subscript: asked at every pass over a node)
        env = envs[d] if d in envs else {}
        if d in cache:
            seen_env, atoms = cache[d]
            if seen_env is env:
                return atoms
        atoms = self._cond_atoms_uncached(d, env)
        self._cond_cache[d] = (env, atoms)
        return atoms

    def _cond_atoms_uncached(self, d: int, env) -> frozenset:
        node = self.graph.nodes[d]
        evaluate = self.evaluator.eval
        if node.kind in (cfgmod.TEST, cfgmod.ASSERT) or (node.kind == cfgmod.LOOP and isinstance(node.stmt, ast.While)):
            test = node.stmt.test
            if isinstance(test, ast.Constant):
                return EMPTY
            return self.evaluator.truth(test, env)
        if node.kind == cfgmod.LOOP:
            # ``for x in xs`` evaluates ``xs`` once, before the first pass (not what the body assigns)
            return self.evaluator.trip_count(node.stmt.iter, self.loop_entry_envs.get(d, env))
        if node.kind == cfgmod.CASE:
            match_stmt = self.info.parents.get(id(node.stmt))
            atoms = evaluate(match_stmt.subject, env) if isinstance(match_stmt, ast.Match) else EMPTY
            if node.stmt.guard is not None:
                atoms |= evaluate(node.stmt.guard, env)
            return atoms
        if any(label in ("raise",) for _, label in node.succs):
            return self.evaluator.raised_atoms(node, env)
        return EMPTY

    def single_rank(self, n: int) -> bool:
        """Whether node ``n`` only runs when the group has a single rank
        (``if world_size > 1: ... else: <here>``).  It follows from the
        graph alone: worked out once per node (every pass of the fixpoint
        asks again)."""
        single = self._single
        if n in single:  # (``in`` and a subscript, not a call of get)
            return single[n]
        known = single[n] = self._single_rank_uncached(n)
        return known

    def _single_rank_uncached(self, n: int) -> bool:
        graph = self.graph
        for d, label in self.closures.get(n, ()):
            node = graph.nodes[d]
            if node.kind == cfgmod.TEST and isinstance(node.stmt, ast.If):
                side = single_rank_side(node.stmt.test, self.info.ctx.size_reads, self.fold)
                if side is not None and side == label:
                    return True
        return False

    def is_exception_decision(self, d: int) -> bool:
        node = self.graph.nodes[d]
        return node.kind == cfgmod.STMT and any(label == "raise" for _, label in node.succs)

    def implicit(self, n: int) -> frozenset:
        """Implicit flow at node ``n``: the atoms of every decision deciding
        whether it runs (an exception decision only inside the handlers it raises into),
        except an ``if``/``else`` whose other arm makes the same assignment
        (:mod:`cslint.analysis.arms`).
        What is written only on some ranks differs in structure as well
        (there or not, None or not), whatever the decision read; what a
        rank writes when it finds its own part of a partition
        (:meth:`selects_own_part`) differs in contents only."""
        atoms = self._deciding_atoms(n)
        if not atoms:
            return atoms
        cached = self._implicit_cache.get(n)
        if cached is not None and (cached[0] is atoms or cached[0] == atoms):
            return cached[1]
        result = self._as_implicit(n, atoms)
        self._implicit_cache[n] = (atoms, result)
        return result

    def _as_implicit(self, n: int, atoms: frozenset, also_skip=None) -> frozenset:
        parts = self._own_parts.get(n)
        if parts is None:
            parts = self._own_parts[n] = [d for d, label in self.closures.get(n, ())
                                          if label != "never" and self.selects_own_part(d)]
        tensors = self._tensor_arms_of(n)
        if not parts and not tensors:
            return whole(atoms)
        own = EMPTY
        for d in parts:
            own = own | self.cond_atoms(d)
        sized = EMPTY
        for d, label in tensors:
            if d not in parts and not (also_skip is not None and also_skip(d, label)):
                sized = sized | self.cond_atoms(d)
        rest = self._deciding_atoms(n, lambda d, label: d in parts or (d, label) in tensors
                                    or (also_skip is not None and also_skip(d, label)))
        return whole(rest) | project(CONTENTS, own) | project(SIZED, sized)

    def _tensor_arms_of(self, n: int) -> tuple:
        """:func:`~cslint.analysis.tensorarms.tensor_deciders` of node ``n``, kept."""
        found = self._tensor_arms.get(n)
        if found is None:
            found = self._tensor_arms[n] = tensor_deciders(self, n)
        return found

    def binds_tensor_either_way(self, d: int, name: str) -> bool:
        """Whether decision ``d`` is an ``if``/``else`` both arms of which
        bind ``name`` to a tensor on every path (armexits' gates ask it)."""
        arms = tensor_arms(self)
        return arms.makes and (decision := self.two_armed_if(d)) is not None and arms.both_arms_bind(decision, name)

    def implicit_without(self, n: int, skip) -> frozenset:
        """:meth:`implicit` without the decisions ``skip(d, label)`` leaves out."""
        return self._as_implicit(n, self._deciding_atoms(n, skip), skip)

    def selects_own_part(self, d: int) -> bool:
        """Whether decision ``d`` is a rank finding its own part of a
        partition (:func:`~cslint.analysis.arms.selects_own_part`)."""
        known = self._parts.get(d)
        if known is None:
            node = self.graph.nodes[d]
            known = self._parts[d] = node.kind == cfgmod.TEST and selects_own_part(
                node.stmt, self.info.parents, self.info.blocks, self.info.ctx.size_reads)
        return known

    def call_implicit(self, n: int, call: ast.Call, skip=None) -> frozenset:
        """Implicit flow at ``call`` (made at node ``n``): what decides
        whether it runs, leaving out an ``if``/``else`` whose other arm makes
        the same call under the same conditions (every rank calls it, on one
        side or the other), a test or a handled failure both sides of which
        call the same callee once on every path to the function's end
        (:mod:`cslint.analysis.exitcalls`: each early exit hands the request
        on as the last statement does), and the decisions ``skip(d, label)``
        leaves out."""
        stmt = self.graph.nodes[n].stmt
        arms, exits = self.arms, self.exit_calls

        def called_alike(d: int, label) -> bool:
            decision = self.two_armed_if(d)
            if (decision is not None and arms.call_in_both_arms(decision, stmt, call)) or bool(skip and skip(d, label)):
                return True
            node = self.graph.nodes[d]
            if node.kind == cfgmod.TEST and type(node.stmt) is ast.If:
                return exits.test_decides_nothing(node.stmt, call)
            return self.is_exception_decision(d) and exits.failure_decides_nothing(node.stmt, call)

        atoms = self._deciding_atoms(n, called_alike)
        return self._as_implicit(n, atoms, called_alike) if atoms else atoms

    def _deciding_atoms(self, n: int, also_skip=None) -> frozenset:
        atoms = EMPTY
        for d, label in self.deciders(n):
            if also_skip is not None and also_skip(d, label):
                continue
            found = self.cond_atoms(d)
            if found:
                # one deciding condition (the common case) gives its own set
                atoms = atoms | found if atoms else found
        return atoms

    def deciders(self, n: int) -> tuple:
        """:meth:`_deciders_of` ``n``, kept."""
        deciders = self._deciders.get(n)
        if deciders is None:
            deciders = self._deciders[n] = self._deciders_of(n)
        return deciders

    def _deciders_of(self, n: int) -> tuple:
        """The decisions node ``n`` is control dependent on whose atoms can
        reach its implicit flow, in closure order: what the graph alone
        rules out (an edge that never runs, an exception decision outside
        its handler, an ``if``/``else`` both of whose arms make ``n``'s
        assignment) is ruled out once."""
        handlers = self.handler_nodes.get(n, ())
        kept = []
        for d, label in self.closures.get(n, ()):
            if label == "never":
                continue
            if (label == "raise" or self.is_exception_decision(d)) \
                    and not any(edge == "raise" and succ in handlers for succ, edge in self.graph.nodes[d].succs):
                continue  # whether it raised decides the code of the handlers it raises into only
            if self._assigns_alike(d, n):
                continue
            kept.append((d, label))
        if kept and self.arms.rebuilt_alike(self.info.func, self.graph.nodes[n].stmt):
            return ()  # the same call binds the name on every path (arms.rebuilt_names)
        return tuple(kept)

    def two_armed_if(self, d: int):
        node = self.graph.nodes[d]
        stmt = node.stmt
        if node.kind == cfgmod.TEST and isinstance(stmt, ast.If) and stmt.orelse:
            return stmt
        return None

    def _assigns_alike(self, d: int, n: int) -> bool:
        """Whether node ``n`` makes an assignment the other arm of the
        ``if`` ``d`` makes too (its ``else``, or the rest of the function
        past an ``if`` that returns; :mod:`cslint.analysis.arms`); asked
        once per pair, by :meth:`_deciders_of`."""
        decision, node = self.graph.nodes[d], self.graph.nodes[n]
        if not (decision.kind == cfgmod.TEST and isinstance(decision.stmt, ast.If) and node.kind == cfgmod.STMT):
            return False
        if self.arms.assignment_in_both_arms(decision.stmt, node.stmt):
            return True
        # the root of a helper's broadcast keeps what it sent (rootkept.py)
        ctx = self.info.ctx
        if type(node.stmt) is not ast.Assign or not decision.stmt.orelse or not has_root_returns(ctx):
            return False
        other = self.arms.other_arm_statements(decision.stmt, node.stmt)
        return other is not None and root_arm_assigns_alike(ctx, self.info, self.evaluator, decision.stmt, node.stmt,
                                                            other[1], other[0])

    # -- the fixpoint ----------------------------------------------------------------
    def flow_at(self, n: int, env: dict, implicit: Optional[frozenset] = None) -> Flow:
        """The :class:`Flow` of node ``n`` entered with ``env`` (``implicit``: instead of :meth:`implicit`)."""
        return Flow(env, partial(self.implicit, n) if implicit is None else implicit, accumulate=False, single_rank=self.single_rank(n),
                    dict_keys=self.info.dict_keys, element_stores=self.info.element_stores)

    def _transfer(self, n: int, env: dict) -> dict:
        node = self.graph.nodes[n]
        s = node.stmt
        if s is None:
            return env
        last = self._last.get(n) if node.kind != cfgmod.EXCEPT else None  # a handler reads the body's failures
        if last is not None:
            out = _replay(self, n, node, env, last)
            if out is not None:
                return out
        transfer = self.transfer
        # this walk binds local names only (fields and the result come from flow_at)
        flow = RecordingFlow(env, partial(self.binding_implicit, n), accumulate=False,
                             single_rank=self.single_rank(n), dict_keys=self.info.dict_keys,
                             element_stores=self.info.element_stores, alike=self.stores and store_alike(self, n))
        flow.written = {}
        info = self.info.node_info(node)
        transfer.walrus(info.walrus, flow)
        kind = node.kind
        if kind == cfgmod.LOOP and isinstance(s, (ast.For, ast.AsyncFor)):
            drawn = self.loop_entry_envs.get(n) if id(s) in self.info.entry_drawn_loops else None  # see syntax
            transfer.loop_target(s, flow, strong=True, iter_env=drawn)  # the way out restores (VouchedEdges.out)
        elif kind == cfgmod.EXCEPT:
            # a caught exception is whatever went wrong on this rank (unless
            # the handler catches only what fails alike everywhere)
            transfer.exception_name(s, self.evaluator.caught_atoms(s), flow)
            self.skipped.bind(self, n, flow)
        elif kind == cfgmod.STMT:
            transfer.simple_statement(s, flow)
            if self.fields.attrs:
                self.fields.bind(s, flow, self.evaluator.eval)
        transfer.inplace_collectives(info.calls, flow, self, n)
        out = flow.current()
        if type(env) is dict:
            implicit = flow._implicit if type(flow._implicit) is frozenset else None
            self._last[n] = _Transfer(env, {key: out[key] for key in flow.written}, implicit)
        return self._single_rank_out(n, out)

    def _single_rank_out(self, n: int, out: dict) -> dict:
        if out and self.single_rank(n):
            # Only a group of one rank gets here: nothing this path carries
            # on to the join after it can differ between the group's ranks
            # (``else: statuses[0].copy_(local)`` beside the all-gather).
            return {name: EMPTY for name in out.keys()}
        return out


class VouchedEdges:
    """The edges out of an ``if`` whose test is a verdict on whether local
    names are None (:func:`~cslint.analysis.presence.vouched_presence`):
    ``if not all_ranks_true(group, buffer is not None): return``.  Such a
    verdict, agreed over a group, vouches on one of its edges that none of
    the names is None on any rank of that group: whichever way what set
    one to None went there (an exception in a ``try`` that failed) no
    longer makes it differ, and whether it is None follows the verdict."""

    __slots__ = ("dataflow", "edges", "refined", "into", "from_entry")

    def __init__(self, dataflow: "Dataflow", edges: dict, refined: Optional[Refinements]):
        self.dataflow = dataflow
        #: (test node, successor) -> (verdict call, ((name, None-setting nodes, other binding nodes), ...))
        self.edges = edges
        self.refined = refined  # the other edges that refine what names hold (edges.Refinements)
        self.into = frozenset(succ for _, succ in edges) | (refined.into if refined is not None else frozenset())
        self.from_entry = [*edges, *(refined.from_entry() if refined is not None else ())]  # (node, successor)

    @classmethod
    def find(cls, dataflow: "Dataflow") -> Optional["VouchedEdges"]:
        edges = {}
        binders = None
        for node in dataflow.graph.nodes:
            if node.kind != cfgmod.TEST or not isinstance(node.stmt, ast.If) \
                    or type(node.stmt.test) is not ast.UnaryOp and type(node.stmt.test) is not ast.Call:
                continue  # (the cheap part of vouched_presence's question)
            vouched = vouched_presence(node.stmt.test)
            if vouched is None:
                continue
            if binders is None:
                binders = _binders(dataflow.graph)
            verdict_label, call, names = vouched
            labels: dict = {}
            for succ, label in node.succs:
                labels.setdefault(succ, set()).add(label)
            for succ, seen in labels.items():
                if len(seen) != 1:
                    continue  # both arms meet there at once
                label = next(iter(seen))
                if label not in (True, False):
                    continue
                kept = tuple((name, binders[name][0], binders[name][1],
                              dataflow.skipped.handlers_binding_only(dataflow, name, binders[name][1]))
                             for name in sorted(names[label == verdict_label]) if name in binders and binders[name][0])
                if kept:
                    edges[node.id, succ] = (call, kept)
        refined = Refinements.find(dataflow)
        return cls(dataflow, edges, refined) if edges or refined is not None else None

    def reaching(self, n: int, node, outs: dict) -> list:
        """The environments that reach node ``n`` from its predecessors."""
        reaching = []
        for p in node.preds:
            out = outs.get(p)
            if out is not None:
                reaching.append(self.out(p, n, out))
        return reaching

    def out(self, p: int, succ: int, out: dict) -> dict:
        """``out`` of node ``p`` as it reaches ``succ``.  Past a vouching
        verdict, the implicit flow where a name was set to None no longer
        counts in it (unless it also decides one of the name's other
        bindings: a fallback made when it was None), and the verdict
        stands for whether it is None; what its values hold themselves (a
        listing's length) still counts."""
        dataflow = self.dataflow
        if self.refined is not None:  # first: the arm's test, as its bindings held it (armexits)
            out = self.refined.gate(dataflow, p, succ, out)
        found = self.edges.get((p, succ))
        if found is None:
            return out if self.refined is None else self.refined.out(dataflow, p, succ, out)
        call, names = found
        verdict = project(WHOLE, dataflow.evaluator.eval(call, dataflow.envs.get(p, {})))
        refined = None
        for name, setters, others, skipping in names:
            atoms = out.get(name)
            if atoms is None:
                continue
            decided = EMPTY
            for m in setters:
                decided |= dataflow.binding_implicit(m, arms=False)  # the gates out of its arm add what it left out
            for handler, bindings in skipping:
                # a failure that skipped every other binding left it as the setter made it
                decided |= dataflow.skipped.skipping_failures(dataflow, handler, bindings)
            decided &= atoms
            for m in others:
                if not decided:
                    break
                decided = decided - dataflow.binding_implicit(m, arms=False)
            if not decided:
                continue
            if refined is None:
                refined = fork(out)
            refined[name] = (atoms - decided) | verdict
        return out if refined is None else refined



def handler_entries(graph, parents: dict) -> dict:
    """node -> the entries (``EXCEPT`` nodes) of the handlers around it."""
    out = {}
    for node in graph.nodes:
        stmt = node.stmt
        if stmt is None:
            continue
        entries = [node.id] if node.kind == cfgmod.EXCEPT else []
        parent = parents.get(id(stmt))
        while parent is not None:
            if isinstance(parent, ast.ExceptHandler):
                entries.extend(graph.stmt_nodes.get(id(parent), ()))
            parent = parents.get(id(parent))
        if entries:
            out[node.id] = frozenset(entries)
    return out


def _binders(graph) -> dict:
    """name -> (the nodes whose statement is ``name = None``, the other
    nodes that may bind it)."""
    binders: dict = {}
    for node in graph.nodes:
        stmt = node.stmt
        if stmt is None:
            continue
        if node.kind == cfgmod.STMT and type(stmt) is ast.Assign and type(stmt.value) is ast.Constant \
                and stmt.value.value is None and all(type(target) is ast.Name for target in stmt.targets):
            for target in stmt.targets:
                binders.setdefault(target.id, ([], []))[0].append(node.id)
            continue
        for name in _names_bound(stmt):
            binders.setdefault(name, ([], []))[1].append(node.id)
    return binders


def _solve(flow: Dataflow) -> None:
    """The fixpoint of ``flow``: its environment on entry to every node
    (``flow.envs``: variable -> atoms, may-union, with implicit flow)."""
    graph, closures = flow.graph, flow.closures
    vouched = flow._vouched
    into = vouched.into if vouched is not None else ()  # the nodes an edge that refines leads to
    envs_in = flow.envs
    entry = envs_in[graph.entry] = flow.info.entry_env()
    fields = flow.fields if flow.fields.attrs else None
    if fields is not None:
        entry.update(fields.entry())
    for name in flow.info.element_stores & entry.keys():
        # a parameter stored into: its own structure, kept apart (Flow.write), is its own part (what the caller keeps apart)
        entry[("own", name)] = params_own(flow.info, entry[name]) or entry[name]
    outs: dict = {}
    order = reverse_postorder(graph, graph.entry)
    position = {n: i for i, n in enumerate(order)}
    # nodes whose implicit flow reads a decision's condition
    readers: dict = {}
    for n in order:
        for d, _label in closures[n] if n in closures else ():
            readers.setdefault(d, []).append(n)
    for p, succ in vouched.from_entry if vouched is not None else ():
        readers.setdefault(p, []).append(succ)  # it refines from p's entry, which may change where p's out does not
    for (_p, succ), gates in flow.arm_gates.items():
        for d, _names in gates:
            readers.setdefault(d, []).append(succ)  # the gate adds d's condition, which may change where p's out does not
    heap = list(range(len(order)))
    queued = set(heap)
    budget = 50 * len(order) + 100  # a safety net; the lattice is finite
    # Past about three passes' worth of steps the solver watches for its
    # own state coming back (a value that cycles: a call result nested
    # to the limit and flattened, again and again): the state decides
    # every later step, so whole cycles can be skipped and the budget
    # runs out on the very state it would have reached step by step.
    watch_from = budget - WATCH_AFTER_PASSES * len(order) if len(order) <= WATCH_MAX_NODES else -1
    anchor = None
    states: dict = {}
    numbers = EnvNumbers()
    while heap and budget > 0:
        if budget <= watch_from:
            if anchor is None:
                anchor = heap[0]
            if heap[0] == anchor:
                state = (frozenset(queued), snapshot(order, envs_in, outs, numbers))
                seen = states[state] if state in states else None
                if seen is None:
                    states[state] = budget
                else:
                    period = seen - budget
                    budget -= budget // period * period
                    states.clear()
                    if budget <= 0:
                        break
        budget -= 1
        i = heapq.heappop(heap)
        queued.discard(i)
        n = order[i]
        node = graph.nodes[n]
        if n != graph.entry:
            if n in into:
                reaching = vouched.reaching(n, node, outs)
            else:
                reaching = [outs[p] for p in node.preds if p in outs]
            # (never empty: the first step of a node in reverse postorder follows that of the node the order's
            # walk reached it from, and every step writes a dict to outs)
            if len(reaching) == 1 or all(out is reaching[0] for out in reaching):
                merged = reaching[0]  # read-only from here on: shared, not copied
            else:
                merged = fork(reaching[0])
                for out in reaching[1:]:
                    merge_into(merged, out)
            if fields is not None:
                merged = fields.at_node(n, node, merged, fork)
            if node.kind == cfgmod.LOOP and len(reaching) > 1 and isinstance(node.stmt, (ast.For, ast.AsyncFor)):
                _note_loop_entry(flow, n, node, outs, position)
            # (the tables are read with ``in`` and a subscript here, not by calls of get: every step reads them)
            known = envs_in[n] if n in envs_in else None
            if known is None or (known is not merged and known != merged):
                first = n not in envs_in
                envs_in[n] = merged
                if not first:
                    for m in readers[n] if n in readers else ():
                        j = position[m] if m in position else None
                        if j is not None and j not in queued:
                            queued.add(j)
                            heapq.heappush(heap, j)
        env = envs_in[n] if n in envs_in else {}
        out = flow._transfer(n, env)
        known = outs[n] if n in outs else None
        if known is None or (known is not out and known != out):
            outs[n] = out
            for succ, _label in node.succs:
                j = position[succ] if succ in position else None
                if j is not None and j not in queued:
                    queued.add(j)
                    heapq.heappush(heap, j)
    if heap:
        # Out of budget: every node still gets the values that reach it
        # (one pass in order) rather than none, which would read as uniform.
        for n in order:
            merged = fork(envs_in[n] if n in envs_in else {})
            for p in graph.nodes[n].preds:
                out = outs[p] if p in outs else {}
                merge_into(merged, out if vouched is None else vouched.out(p, n, out))
            envs_in[n] = merged
            outs[n] = flow._transfer(n, merged)


def _note_loop_entry(flow: Dataflow, n: int, node, outs: dict, position: dict) -> None:
    """What a ``for`` loop's iterable is evaluated in: what reaches the loop from its predecessors earlier in
    reverse postorder, along each edge as the loop's entry reads it (:meth:`VouchedEdges.out`: the tests of
    the ``if`` arms left on the way, armexits, then the edge's own refinement -- a loop left before it adds
    back what its target held, edges.restored), not what its body's back edges bring round."""
    here, vouched = position[n], flow._vouched
    entering = [outs[p] if vouched is None else vouched.out(p, n, outs[p])
                for p in node.preds if p in outs and position.get(p, here) < here]
    if entering:
        env = entering[0] if len(entering) == 1 else fork(entering[0])
        for out in entering[1:]:
            merge_into(env, out)
        flow.loop_entry_envs[n] = env


class _Transfer:
    """A node's last transfer: the environment it entered with, what it wrote (variable -> value,
    in the order written) and the implicit flow it read (None if it read none)."""

    __slots__ = ("env", "writes", "implicit")

    def __init__(self, env: dict, writes: dict, implicit):
        self.env, self.writes, self.implicit = env, writes, implicit


def _replay(dataflow: Dataflow, n: int, node, env: dict, last: "_Transfer"):
    """Node ``n``'s transfer of ``env`` without evaluating its statement again, when nothing it
    reads differs from its last transfer: every variable its expressions mention or it wrote
    holds what it held then, and so does the implicit flow, if it was read.  A loop's second
    pass changes the few variables the loop assigns, and most statements of its body read none
    of them.  None when it must run."""
    before = last.env
    if type(env) is not dict:
        return None
    if env is not before:
        known_names = dataflow._names
        if n in known_names:
            names = known_names[n]
        else:
            names = known_names[n] = _mentioned_names(node, dataflow.info.node_info(node).exprs)
        written = last.writes
        for key, value in env.items():  # (``in`` and a subscript, not a call of before.get: most keys hold alike)
            if key in before:
                old = before[key]
                if old is value:
                    continue
                if old != value and _may_read(key, names, written):
                    return None
            elif _may_read(key, names, written):
                return None
        for key in before:  # a variable the last transfer saw that env no longer holds
            if key not in env and _may_read(key, names, written):
                return None
    if last.implicit is not None and dataflow.binding_implicit(n) != last.implicit:
        return None
    writes = last.writes
    if writes:
        out = fork(env)
        for key, value in writes.items():
            out[key] = value
    else:
        out = env
    return dataflow._single_rank_out(n, out)


def _may_read(key, names: frozenset, written: dict) -> bool:
    """Whether a transfer that mentions ``names`` and wrote ``written`` may
    read the variable ``key`` (a name, a dict's key ``("key", name, k)``, a
    container's own structure ``("own", name)``)."""
    if key in written:
        return True
    if type(key) is str:
        return key in names
    return type(key) is not tuple or len(key) < 2 or (key[0] != "key" and key[0] != "own") or key[1] in names
