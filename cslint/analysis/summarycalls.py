"""What a statement of a summarised function hands the whole-tree pass, mixed into the summary walk
(:class:`SummaryCalls`): a call site for each call with arguments that resolves to a function of the tree (its
arguments, its own-part keywords, its group arguments and the implicit flow it runs under), and what decides that a
statement fails with an error nothing there catches (its local work, the callee's own tests) or that a ``try``
body raises."""

from __future__ import annotations

import ast
from ..model import Span
from . import cfg as cfgmod
from .astwalk import DEFINITIONS, holds_kind, walked
from .atoms import EMPTY
from .feasibility import forwarded_case_parameters
from .positions import own_arguments
from .records import Site
from .syntax import dotted

_RAISES = frozenset({ast.Raise})



class SummaryCalls:
    """Mixed into :class:`~cslint.analysis.summary.SummaryWalk`: reads ``self.info`` (the function's facts, whose
    walk found each statement's calls) and ``self.evaluator``, and keeps each statement's resolved calls in
    ``self._calls_memo``."""

    def _raised_in(self, body, env, implicit) -> frozenset:
        """What makes a ``try`` body raise: its statements' exceptions, its
        own ``raise`` statements (under the implicit flow) and the tests of
        the ``if`` statements that raise."""
        raised = EMPTY
        for inner in body:
            if type(inner) in DEFINITIONS:
                continue  # a definition raises nothing where it stands
            raised |= self.evaluator.raised_atoms(cfgmod.Node(0, cfgmod.STMT, inner), env)
            if isinstance(inner, ast.Raise):
                raised |= implicit
            if isinstance(inner, ast.If) and holds_kind(inner, _RAISES):
                raised |= self.evaluator.eval(inner.test, env)
        return raised

    def _calls(self, s, env, variant, implicit=EMPTY) -> None:
        """Calls to analysed functions made by this statement (for parameter
        flow), and under a test of the function's own the calls it makes
        without arguments (``if rank == 0: self.refill()``): what they write,
        they write only where the test holds."""
        resolved = self._resolved_calls(s)
        if implicit:
            bare = self._resolved_bare_calls(s)
            if bare:
                resolved = sorted((*resolved, *bare), key=lambda found: (found[0].lineno, found[0].col_offset))
        for node, ref in resolved:
            args, kwargs = self.evaluator.args(node, env)
            if not implicit and not any(args) and not any(a for _, a in kwargs):
                continue
            owned = own_arguments(self.evaluator, node, args, env)
            if owned:
                kwargs = kwargs + owned  # what the callee's parameter own parts read
            raw = dotted(node.func) or "call"
            site = Site(Span.of(node), raw, None, ref, args, kwargs, ())
            site.ctx_atoms = implicit
            site.group_args = self.info.ctx.group_arguments(node)
            if self.case_params:
                site.forwarded = forwarded_case_parameters(node, self.case_params)
            variant.sites.append(site)

    def _fill_args_memo(self, s, env) -> None:
        """What :meth:`_calls` leaves in the statement's argument memo,
        without the call sites: the statement's later evaluations read
        the arguments as they were before its own bindings."""
        args = self.evaluator.args
        for node, _ref in self._resolved_calls(s):
            args(node, env)

    def _resolved_bare_calls(self, s) -> list:
        """(call, ref) for the calls without arguments a statement makes itself that resolve to a function."""
        key = id(s)
        by_statement = self.info.bare_by_statement
        if key not in by_statement:
            return ()  # (most statements make no call without arguments)
        memo = self._bare_memo
        if key in memo:
            return memo[key]
        found = memo[key] = [(node, ref) for node in by_statement[key]
                             if (ref := self.info.resolve_ref(node.func)) is not None]
        return found

    def _resolved_calls(self, s) -> list:
        """(call, ref) for the calls with arguments that a statement makes
        itself (not in nested blocks or nested definitions; lambdas
        included) and that resolve to a function, in source order; found by
        the walk of :meth:`FunctionInfo.scan_calls`."""
        memo = self._calls_memo
        key = id(s)
        if key in memo:  # (``in`` and a subscript, not a call of get: a statement is read again and again)
            return memo[key]
        by_statement, lambdas_by_statement = self.info.calls_by_statement, self.info.lambdas_by_statement
        own = by_statement[key] if key in by_statement else None
        lambdas = lambdas_by_statement[key] if key in lambdas_by_statement else None
        if not own and not lambdas:
            found = memo[key] = ()  # most statements call nothing with arguments
            return found
        calls = list(own or ())
        for lam in lambdas or ():
            calls.extend(node for node in walked(lam.body)
                         if type(node) is ast.Call and (node.args or node.keywords))
        calls.sort(key=lambda node: (node.lineno, node.col_offset))
        found = []
        for node in calls:
            ref = self.info.resolve_ref(node.func)
            if ref is not None:
                found.append((node, ref))
        memo[key] = found
        return found
