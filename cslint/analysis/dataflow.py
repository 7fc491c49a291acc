"""The CFG dataflow of a function that can reach a collective: its control-flow
graph under one mode assignment, control dependence, and the atoms of every
variable at every node (may-union, with implicit flow from the decisions a
node is control dependent on)."""

from __future__ import annotations

import ast
import heapq

from . import cfg as cfgmod
from .atoms import EMPTY, source
from .evaluator import Evaluator
from .function import FunctionInfo
from .syntax import pairwise, single_rank_side, target_names
from .vocabulary import ALL_MODES_ALL_DIMS, MUTATORS


class Dataflow:
    """One function's CFG under one mode fold, solved: ``envs[n]`` holds the
    variables' atoms on entry to node ``n``."""

    def __init__(self, info: FunctionInfo, evaluator: Evaluator, fold):
        self.info = info
        self.evaluator = evaluator
        graph = cfgmod.build_cfg(info.func, fold)
        ipdom = cfgmod.postdominators(graph)
        cd = cfgmod.control_dependence(graph, ipdom)
        self.graph, self.cd, self.live = graph, cd, cfgmod.reachable(graph)
        self.handler_nodes = self._handler_nodes()
        self._cond_cache: dict = {}
        closures = {n: cfgmod.control_closure(cd, n) for n in self.live}
        for n, owner in graph.finally_owner.items():
            if n in closures:
                closures[n] = self._finally_closure(n, owner, closures[n])
        #: node -> [(decision node, edge label)] it is (iteratively) control dependent on
        self.closures = closures
        self.envs: dict = {}
        self._solve()
        self.exit_env = self.envs.get(graph.exit, {})

    # -- control dependence ------------------------------------------------------
    def _handler_nodes(self) -> set:
        parents = self.info.parents
        out = set()
        for node in self.graph.nodes:
            if node.stmt is not None and node.kind != cfgmod.EXCEPT:
                parent = parents.get(id(node.stmt))
                while parent is not None:
                    if isinstance(parent, ast.ExceptHandler):
                        out.add(node.id)
                        break
                    parent = parents.get(id(parent))
            elif node.kind == cfgmod.EXCEPT:
                out.add(node.id)
        return out

    def _finally_closure(self, n, owner, closure):
        graph, cd = self.graph, self.cd
        try_entry = None
        for stmt in owner.body:
            try_entry = graph.node_of(stmt)
            if try_entry is not None:
                break
        outer = {d for d, _ in cfgmod.control_closure(cd, try_entry)} if try_entry is not None else set()
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
        env = self.envs.get(d, {})
        cached = self._cond_cache.get(d)
        if cached is not None and cached[0] is env:
            return cached[1]
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
            return evaluate(test, env)
        if node.kind == cfgmod.LOOP:
            return evaluate(node.stmt.iter, env)
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
        (``if world_size > 1: ... else: <here>``)."""
        graph = self.graph
        for d, label in self.closures.get(n, ()):
            node = graph.nodes[d]
            if node.kind == cfgmod.TEST and isinstance(node.stmt, ast.If):
                side = single_rank_side(node.stmt.test)
                if side is not None and side == label:
                    return True
        return False

    def is_exception_decision(self, d: int) -> bool:
        node = self.graph.nodes[d]
        return node.kind == cfgmod.STMT and any(label == "raise" for _, label in node.succs)

    def implicit(self, n: int) -> frozenset:
        """Implicit flow at node ``n``: the atoms of every decision deciding
        whether it runs (exception decisions only inside their handlers)."""
        atoms = EMPTY
        in_handler = n in self.handler_nodes
        for d, label in self.closures.get(n, ()):
            if label == "never":
                continue
            if not in_handler and (label == "raise" or self.is_exception_decision(d)):
                continue
            atoms = atoms | self.cond_atoms(d)
        return atoms

    # -- the fixpoint ----------------------------------------------------------------
    def _solve(self) -> None:
        """env_in per node: variable -> atoms (may-union), with implicit flow."""
        graph, closures = self.graph, self.closures
        envs_in = self.envs
        envs_in[graph.entry] = self.info.entry_env()
        outs: dict = {}
        order = _reverse_postorder(graph)
        position = {n: i for i, n in enumerate(order)}
        # nodes whose implicit flow reads a decision's condition
        readers: dict = {}
        for n in order:
            for d, _label in closures.get(n, ()):
                readers.setdefault(d, []).append(n)
        heap = list(range(len(order)))
        queued = set(heap)
        budget = 50 * len(order) + 100  # a safety net; the lattice is finite
        while heap and budget > 0:
            budget -= 1
            i = heapq.heappop(heap)
            queued.discard(i)
            n = order[i]
            node = graph.nodes[n]
            if n != graph.entry:
                merged: dict = {}
                for p in node.preds:
                    out = outs.get(p)
                    if out is None:
                        continue
                    if not merged:
                        merged = dict(out)
                        continue
                    for k, v in out.items():
                        old = merged.get(k)
                        if old is None:
                            merged[k] = v
                        elif old is not v:
                            merged[k] = old | v
                if n not in envs_in or envs_in[n] != merged:
                    first = n not in envs_in
                    envs_in[n] = merged
                    if not first:
                        for m in readers.get(n, ()):
                            j = position.get(m)
                            if j is not None and j not in queued:
                                queued.add(j)
                                heapq.heappush(heap, j)
            env = envs_in.get(n, {})
            out = self._transfer(n, env)
            if n not in outs or outs[n] != out:
                outs[n] = out
                for succ, _label in node.succs:
                    j = position.get(succ)
                    if j is not None and j not in queued:
                        queued.add(j)
                        heapq.heappush(heap, j)
        if heap:
            # Out of budget: every node still gets the values that reach it
            # (one pass in order) rather than none, which would read as uniform.
            for n in order:
                merged = dict(envs_in.get(n, {}))
                for p in graph.nodes[n].preds:
                    for k, v in outs.get(p, {}).items():
                        merged[k] = merged[k] | v if k in merged else v
                envs_in[n] = merged
                outs[n] = self._transfer(n, merged)

    def _transfer(self, n: int, env: dict) -> dict:
        node = self.graph.nodes[n]
        s = node.stmt
        if s is None:
            return env
        out = None
        evaluate = self.evaluator.eval
        dict_keys = self.info.dict_keys

        def setvar(name, atoms, strong=True):
            nonlocal out
            if out is None:
                out = dict(env)
            if strong:
                out[name] = atoms
            else:
                out[name] = out.get(name, EMPTY) | atoms
            if type(name) is str and name in dict_keys:
                # any write to the dict itself reaches every key; a literal
                # refines them afterwards (_dict_literal_keys)
                for key in dict_keys[name]:
                    setvar(("key", name, key), atoms, strong)

        info = self.info.node_info(node)
        # walrus anywhere in the node's own expressions
        for sub in info.walrus:
            setvar(sub.target.id, evaluate(sub.value, env) | self.implicit(n))
        if node.kind == cfgmod.LOOP and isinstance(s, (ast.For, ast.AsyncFor)):
            atoms = evaluate(s.iter, env) | self.implicit(n)
            for name in target_names(s.target):
                setvar(name, atoms, strong=False)
        elif node.kind == cfgmod.EXCEPT and s.name:
            setvar(s.name, frozenset({source("exception from local work", "caught exception", self.info.ctx.path,
                                             s.lineno, ALL_MODES_ALL_DIMS)}))
        elif node.kind == cfgmod.STMT:
            if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                value = s.value
                if value is not None:
                    implicit = self.implicit(n)
                    targets = s.targets if isinstance(s, ast.Assign) else [s.target]
                    pairs = pairwise(targets, value)
                    if self.single_rank(n):
                        # only one rank runs here: nothing can differ
                        for target in targets:
                            self._assign(target, EMPTY, setvar, False, env)
                        return out if out is not None else env
                    if pairs is not None:
                        for target, part in pairs:
                            self._assign(target, evaluate(part, env) | implicit, setvar, False, env)
                    else:
                        atoms = evaluate(value, env) | implicit
                        for target in targets:
                            self._assign(target, atoms, setvar, isinstance(s, ast.AugAssign), env)
                        if isinstance(value, ast.Dict) and not isinstance(s, ast.AugAssign):
                            self._dict_literal_keys(targets, value, implicit, setvar, env)
            elif isinstance(s, (ast.With, ast.AsyncWith)):
                for item in s.items:
                    if item.optional_vars is not None:
                        atoms = evaluate(item.context_expr, env)
                        for name in target_names(item.optional_vars):
                            setvar(name, atoms)
            elif isinstance(s, (ast.Import, ast.ImportFrom)):
                for alias in s.names:
                    setvar((alias.asname or alias.name).split(".")[0], EMPTY)
            elif isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                setvar(s.name, EMPTY)
            elif isinstance(s, ast.Expr) and isinstance(s.value, (ast.Call, ast.Await)):
                call = s.value.value if isinstance(s.value, ast.Await) else s.value
                if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
                    if call.func.attr in MUTATORS and isinstance(call.func.value, ast.Name):
                        atoms = EMPTY
                        for arg in call.args:
                            atoms |= evaluate(arg, env)
                        setvar(call.func.value.id, atoms | self.implicit(n), strong=False)
        # in-place collectives make their buffers group-uniform
        collective = self.info.ctx.atoms.collective
        for call_info in info.calls:
            match = call_info.match
            if match is None or match.spec is None:
                continue
            call = call_info.call
            for index in match.spec.inplace:
                if index < len(call.args) and isinstance(call.args[index], ast.Name):
                    name = call.args[index].id
                    setvar(name, collective(match.group, (out or env).get(name, EMPTY)))
            for kw in call.keywords:
                if kw.arg in ("tensor", "object_list", "tensor_list", "output", "recvbuf", "buf") \
                        and isinstance(kw.value, ast.Name):
                    setvar(kw.value.id, collective(match.group, (out or env).get(kw.value.id, EMPTY)))
        return out if out is not None else env

    def _assign(self, target, atoms, setvar, augmented, env):
        if isinstance(target, ast.Name):
            setvar(target.id, atoms, strong=not augmented)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self._assign(elt, atoms, setvar, augmented, env)
        elif isinstance(target, ast.Starred):
            self._assign(target.value, atoms, setvar, augmented, env)
        elif isinstance(target, ast.Subscript):
            base = target.value
            extra = self.evaluator.eval(target.slice, env)
            if isinstance(base, ast.Name):
                setvar(base.id, atoms | extra, strong=False)
                key = target.slice.value if isinstance(target.slice, ast.Constant) else None
                if isinstance(key, str) and key in self.info.dict_keys.get(base.id, ()):
                    setvar(("key", base.id, key), atoms, strong=not augmented)

    def _dict_literal_keys(self, targets, value: ast.Dict, implicit, setvar, env) -> None:
        """``name = {"k": v, ...}``: each key read later gets its own value."""
        if any(k is None or not isinstance(k, ast.Constant) for k in value.keys):
            return  # ``**other`` or computed keys: every key may hold anything
        literal = {k.value: v for k, v in zip(value.keys, value.values)}
        for target in targets:
            if isinstance(target, ast.Name):
                for key in self.info.dict_keys.get(target.id, ()):
                    part = literal.get(key)
                    setvar(("key", target.id, key),
                           (self.evaluator.eval(part, env) if part is not None else EMPTY) | implicit)


def _reverse_postorder(graph) -> list:
    seen = {graph.entry}
    order = []
    stack = [(graph.entry, iter(graph.nodes[graph.entry].succs))]
    while stack:
        v, it = stack[-1]
        advanced = False
        for s, _ in it:
            if s not in seen:
                seen.add(s)
                stack.append((s, iter(graph.nodes[s].succs)))
                advanced = True
                break
        if not advanced:
            order.append(v)
            stack.pop()
    order.reverse()
    return order
