"""The summary walk: what a function that cannot reach a collective passes on
to the rest of the tree (the fields it writes, what it returns, the arguments
it passes to analysed functions), from one syntactic pass instead of a CFG.

Variables accumulate (flow-insensitive within branches); implicit flow comes
from the enclosing tests and from earlier rank-local exits in the same block.
Sound for summaries, much cheaper than the dataflow.
"""

from __future__ import annotations

import ast

from ..model import Span
from . import cfg as cfgmod
from .astwalk import walk as fast_walk
from .atoms import EMPTY, qual_ref
from .evaluator import Evaluator
from .records import FieldType, FieldWrite, Site, Variant
from .scope import canonical_text
from .syntax import dotted, first_exit_in, flatten_targets, pairwise, target_names
from .vocabulary import MUTATORS


class SummaryWalk:
    """The summary of one function (see the module docstring)."""

    def __init__(self, evaluator: Evaluator):
        self.evaluator = evaluator
        self.info = evaluator.info
        self._calls_memo: dict = {}  # id(statement) -> [(call, ref)]
        self.exit_env: dict = {}

    def variant(self) -> Variant:
        """Field writes, returns and argument flows of the function."""
        variant = Variant()
        env = self.info.entry_env()
        body = self.info.body
        # A second pass carries values around loops; without a loop it would
        # only make earlier reads see later assignments.
        for _ in range(2 if self.info.has_loop else 1):
            variant = Variant()
            self._block(body, env, EMPTY, variant)
        self.evaluator.args_memo = None
        self.exit_env = env
        return variant

    def _block(self, stmts, env, implicit, variant) -> None:
        for s in stmts:
            exit_atoms = self._statement(s, env, implicit, variant)
            if exit_atoms:
                implicit = implicit | exit_atoms

    def _accumulate(self, env, name, atoms):
        old = env.get(name)
        env[name] = atoms if old is None else (old | atoms)

    def _statement(self, s, env, implicit, variant) -> frozenset:
        """Handle one statement; returns the atoms of a condition under which
        the rest of the block may be skipped (an early exit inside it)."""
        t = type(s)
        if t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            env[s.name] = EMPTY
            return EMPTY
        self.evaluator.args_memo = {}
        self._calls(s, env, variant, implicit)
        if t is ast.If:
            cond = self.evaluator.eval(s.test, env)
            inner = implicit | cond
            self._block(s.body, env, inner, variant)
            self._block(s.orelse, env, inner, variant)
            return cond if (first_exit_in(s.body) or first_exit_in(s.orelse)) else EMPTY
        if t in (ast.For, ast.AsyncFor):
            it = self.evaluator.eval(s.iter, env)
            for name in target_names(s.target):
                self._accumulate(env, name, it | implicit)
            self._block(s.body, env, implicit | it, variant)
            self._block(s.orelse, env, implicit | it, variant)
            return EMPTY
        if t is ast.While:
            cond = self.evaluator.eval(s.test, env)
            self._block(s.body, env, implicit | cond, variant)
            self._block(s.orelse, env, implicit | cond, variant)
            return EMPTY
        if t is ast.Try or type(s).__name__ == "TryStar":
            self._block(s.body, env, implicit, variant)
            raised = EMPTY
            for inner in s.body:
                if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    continue
                raised |= self.evaluator.raised_atoms(cfgmod.Node(0, cfgmod.STMT, inner), env)
                if isinstance(inner, ast.Raise):
                    raised |= implicit
                if isinstance(inner, ast.If) and any(isinstance(x, ast.Raise) for x in fast_walk(inner)):
                    raised |= self.evaluator.eval(inner.test, env)
            for handler in s.handlers:
                exc = raised
                if handler.name:
                    env[handler.name] = exc
                self._block(handler.body, env, implicit | exc, variant)
            self._block(s.orelse, env, implicit, variant)
            self._block(s.finalbody, env, implicit, variant)
            return EMPTY
        if t in (ast.With, ast.AsyncWith):
            for item in s.items:
                if item.optional_vars is not None:
                    atoms = self.evaluator.eval(item.context_expr, env)
                    for name in target_names(item.optional_vars):
                        self._accumulate(env, name, atoms)
            self._block(s.body, env, implicit, variant)
            return EMPTY
        if t is ast.Match:
            subject = self.evaluator.eval(s.subject, env)
            for case in s.cases:
                self._block(case.body, env, implicit | subject, variant)
            return EMPTY
        if t in (ast.Assign, ast.AnnAssign, ast.AugAssign):
            if s.value is None:
                return EMPTY
            targets = s.targets if t is ast.Assign else [s.target]
            pairs = pairwise(targets, s.value)
            if pairs is not None:
                for target, part in pairs:
                    for name in target_names(target):
                        self._accumulate(env, name, self.evaluator.eval(part, env) | implicit)
            atoms = self.evaluator.eval(s.value, env) | implicit
            for target in targets:
                for sub in flatten_targets(target):
                    if pairs is not None and isinstance(sub, ast.Name):
                        continue
                    if isinstance(sub, ast.Name):
                        self._accumulate(env, sub.id, atoms)
                    elif isinstance(sub, ast.Subscript) and isinstance(sub.value, ast.Name):
                        self._accumulate(env, sub.value.id, atoms | self.evaluator.eval(sub.slice, env))
                    attr = self.info.self_attr(sub)
                    base_attr = self.info.self_attr(sub.value) if isinstance(sub, ast.Subscript) else None
                    if attr or base_attr:
                        extra = self.evaluator.eval(sub.slice, env) if base_attr else EMPTY
                        variant.fields.append(FieldWrite(self.info.class_key, attr or base_attr, atoms | extra, s.lineno))
                        if attr and isinstance(s.value, ast.Call):
                            ref = self.info.resolve_ref(s.value.func)
                            if ref is not None:
                                variant.field_types.append(FieldType(self.info.class_key, attr, ref))
                        if attr and isinstance(s.value, ast.Name) and s.value.id in self.info.annotations:
                            variant.field_types.append(FieldType(self.info.class_key, attr, qual_ref(
                                canonical_text(self.info.annotations[s.value.id], self.info.ctx.imports))))
            return EMPTY
        if t is ast.Return:
            if s.value is not None:
                variant.returns = variant.returns | self.evaluator.eval(s.value, env) | implicit
            return EMPTY
        if t is ast.Expr and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Attribute) \
                and s.value.func.attr in MUTATORS:
            call = s.value
            atoms = implicit
            for arg in call.args:
                atoms = atoms | self.evaluator.eval(arg, env)
            receiver = call.func.value
            if isinstance(receiver, ast.Name):
                self._accumulate(env, receiver.id, atoms)
            attr = self.info.self_attr(receiver)
            if attr is not None:
                variant.fields.append(FieldWrite(self.info.class_key, attr, atoms, s.lineno))
            return EMPTY
        if t in (ast.Import, ast.ImportFrom):
            for alias in s.names:
                env[(alias.asname or alias.name).split(".")[0]] = EMPTY
        return EMPTY

    def _calls(self, s, env, variant, implicit=EMPTY) -> None:
        """Calls to analysed functions made by this statement (for parameter flow)."""
        for node, ref in self._resolved_calls(s):
            args, kwargs = self.evaluator.args(node, env)
            if not implicit and not any(args) and not any(a for _, a in kwargs):
                continue
            raw = dotted(node.func) or "call"
            site = Site(Span.of(node), raw, raw, None, ref, args, kwargs, ())
            site.ctx_atoms = implicit
            variant.sites.append(site)

    def _resolved_calls(self, s) -> list:
        """(call, ref) for the calls with arguments that a statement makes
        itself (not in nested blocks or nested definitions; lambdas
        included) and that resolve to a function, in source order; found by
        the walk of :meth:`FunctionInfo.scan_calls`."""
        memo = self._calls_memo
        found = memo.get(id(s))
        if found is not None:
            return found
        calls = list(self.info.calls_by_statement.get(id(s), ()))
        for lam in self.info.lambdas_by_statement.get(id(s), ()):
            calls.extend(node for node in fast_walk(lam.body)
                         if type(node) is ast.Call and (node.args or node.keywords))
        calls.sort(key=lambda node: (node.lineno, node.col_offset))
        found = []
        for node in calls:
            ref = self.info.resolve_ref(node.func)
            if ref is not None:
                found.append((node, ref))
        memo[id(s)] = found
        return found
