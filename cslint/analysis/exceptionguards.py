"""The conditions a failure puts on a call site, mixed into the guard classification (:class:`ExceptionGuards`): an
exception edge from a statement before the site (unless every way from it to the site goes through a rendezvous
every member joins: ``_joined_after``), a call of a function of the file that can fail on this rank on the way to
the site (``callee_escapes``, under ``unhandled-exceptions = "hang"``), and a ``finally`` body that also runs on the
rank whose ``try`` body raised (``_finally_cond``)."""

from __future__ import annotations

import ast
from typing import Optional

from ..model import Span
from . import cfg as cfgmod
from .astwalk import walk as fast_walk, walked
from .escapes import escaped_calls, failing_functions
from .exits import catches_everything
from .records import Cond
from .retries import retry_facts
from .syntax import short, unparse


class ExceptionGuards:
    """Mixed into :class:`~cslint.analysis.guards.Guards`: reads ``self.info`` (the function), ``self.flow`` (its
    dataflow), ``self.evaluator`` and ``self.alternatives``, and keeps its answers per statement in
    ``self._callee_escapes``, per failing statement in ``self._retries`` and per ``try`` in ``self._finally``."""

    def callee_escapes(self, stmt) -> tuple:
        """Under ``unhandled-exceptions = "hang"``: a condition per earlier
        statement on the way to ``stmt`` (in its own block or an enclosing
        one, outside any ``try``) that calls a function of the file that can
        fail on this rank: the rank it fails on leaves, the others go on to
        the site.  The callee's own tests above its failing work decide
        (escapes.py); kept per statement."""
        known = self._callee_escapes.get(id(stmt))
        if known is not None and known[0] is stmt:
            return known[1]
        info = self.info
        out = []
        if failing_functions(info.ctx):
            child = stmt
            while child is not None:
                block = info.blocks.get(id(child), ())
                for i in range(len(block) - 1, -1, -1):
                    if block[i] is child:
                        for earlier in reversed(block[:i]):
                            if isinstance(earlier, cfgmod.COMPOUND_STATEMENTS) or info.enclosing_try(earlier):
                                continue
                            escapes = escaped_calls(info, earlier)
                            if escapes:
                                out.append(self._exception(earlier, escapes, "escape-callee"))
                        break
                child = info.parents.get(id(child))
        result = tuple(out)
        self._callee_escapes[id(stmt)] = (stmt, result)
        return result

    def _failure_decides(self, n: int, d: int, label, closure) -> bool:
        """Whether only the failure of the test or header at node ``d`` decides node ``n``: ``n`` is reached by
        its exception edge (into a handler), or whichever way the test goes (:meth:`_both_arms_reach`: the
        arms, a raise in them caught inside included, come back to it, and the test's own failure, into a
        handler or past a suppressing ``with``, leaves the way to it)."""
        kind = self.flow.graph.nodes[d].kind
        if label == "raise":
            return kind != cfgmod.STMT
        return kind == cfgmod.TEST and self._both_arms_reach(n, d, closure)

    def _both_arms_reach(self, n: int, d: int, closure) -> bool:
        """Whether node ``n`` (or a decision of ``closure`` over it) post-dominates both the True and the
        False successor of the test ``d`` that has an exception edge: the arms meet again before it, and
        only the test's own failure leaves the way to it."""
        nodes = self.flow.graph.nodes
        succs = nodes[d].succs
        if not any(label == "raise" for _, label in succs):
            return False
        arms = [succ for succ, label in succs if label is True or label is False]
        if len(arms) != 2:
            return False
        flow = self.flow
        ipdom, cd = flow._ipdom, flow.cd
        for m in [n] + [dd for dd, _ in closure]:  # the link of the chain from ``n`` that ``d`` decides directly
            if any(dd == d for dd, _ in cd.get(m, ())) and all(_postdominated(ipdom, arm, m) for arm in arms):
                return True
        return False

    # -- rendezvous ---------------------------------------------------------------------
    def _joined_after(self, raising, site_stmt) -> bool:
        """Whether every way from ``raising`` to ``site_stmt`` goes through a
        call that makes a process group every member joins together
        (``init_process_group``, ``new_group``; the presets name them),
        ``raising`` itself included.  A rank that fails there, or before it,
        leaves its peers waiting inside that rendezvous: none of them reaches
        the collective without it, so the failure does not split the group
        at the collective."""
        names = self.info.ctx.knowledge.rendezvous
        if not names or raising is None or site_stmt is None:
            return False
        parents = self.info.parents
        node = site_stmt
        while node is not None and node is not self.info.func:
            parent = parents.get(id(node))
            for block in _blocks_of(parent):
                if not any(b is node for b in block):
                    continue
                for before in block:
                    if before is node:
                        break
                    if (before.lineno >= raising.lineno or self.info.inside(raising, before)) \
                            and _joins_surely(before, names):
                        return True
            node = parent
        return False

    def _exception(self, dstmt, atoms, statement: str = "try") -> Cond:
        try_stmt = self.info.enclosing_try(dstmt)
        text = "exception raised by `" + unparse(dstmt).split("\n")[0] + "`"
        return Cond("exception", atoms, short(text), getattr(dstmt, "lineno", 0),
                    Span.of(try_stmt) if try_stmt is not None else Span.of(dstmt), statement=statement,
                    retry=self._retry(dstmt) if statement == "try" and atoms else None)

    def _arms_retry(self, dstmt: ast.If) -> Optional[tuple]:
        """An ``if`` with no exit of its own decides a site after it only
        through the failures of its arms' statements: where an unbounded loop
        retries each of them (retries.py), what all of them need together."""
        graph = self.flow.graph
        quiet, own, found = [], [], False
        for stmt in walked(dstmt):
            if stmt is dstmt or not isinstance(stmt, ast.stmt):
                continue
            node = graph.node_of(stmt)
            if node is None:
                continue
            labels = [label for _, label in graph.nodes[node].succs]
            if cfgmod.ESCAPE in labels:
                return None
            if "raise" in labels:
                retry = self._retry(stmt)
                if retry is None:
                    return None
                quiet += retry[0]
                own += retry[1]
                found = True
        return (tuple(dict.fromkeys(quiet)), tuple(dict.fromkeys(own))) if found else None

    def _retry(self, dstmt) -> Optional[tuple]:
        """What an unbounded loop's retry of ``dstmt``'s failure needs to stay in step (retries.py); kept per
        statement, as every site after it asks."""
        known = self._retries.get(id(dstmt))
        if known is None or known[0] is not dstmt:
            known = self._retries[id(dstmt)] = (dstmt, retry_facts(self.info, self.alternatives, dstmt))
        return known[1]

    def _finally_cond(self, node: cfgmod.Node) -> Optional[Cond]:
        """A call in a ``finally`` body also runs on the rank whose ``try``
        body raised, on its way out, while the other ranks are still in the
        ``try`` body's collectives: the sequences differ, and that rank can
        wait in it without exiting for a launcher to notice.  The exceptions that reach the
        ``finally`` (none when a handler swallows everything) decide it; the
        two paths are the ``try`` body then the ``finally``, and the
        ``finally`` alone, so a ``try`` body without collectives leaves the
        ranks in step."""
        owner = self.flow.graph.finally_owner.get(node.id)
        if owner is None:
            return None
        # the same for every call of the ``finally`` body: made once, shared
        known = self._finally.get(id(owner))
        if known is not None and known[0] is owner:
            return known[1]
        cond = self._finally_cond_uncached(owner)
        self._finally[id(owner)] = (owner, cond)
        return cond

    def _finally_cond_uncached(self, owner: ast.Try) -> Optional[Cond]:
        if any(catches_everything(handler) for handler in owner.handlers if not _reraises(handler)):
            return None
        evaluator, flow = self.evaluator, self.flow
        atoms = frozenset()
        first = None
        for stmt in owner.body:
            for inner in walked(stmt):
                if not isinstance(inner, ast.stmt) or isinstance(inner, cfgmod.COMPOUND_STATEMENTS):
                    continue
                inner_node = flow.graph.node_of(inner)
                env = flow.envs.get(inner_node, {}) if inner_node is not None else {}
                raised = evaluator.raised_atoms(cfgmod.Node(0, cfgmod.STMT, inner), env)
                if raised and first is None:
                    first = inner
                atoms |= raised
        if not atoms:
            return None
        text = "exception raised by `" + unparse(first).split("\n")[0] + "` reaches its `finally`"
        finally_sites = self.alternatives.sites_in(owner.finalbody)
        alternatives = (self.alternatives.sites_in(owner.body) + finally_sites, finally_sites)
        return Cond("exception", atoms, short(text), getattr(first, "lineno", 0), Span.of(owner),
                    statement="finally", two_sided=True, alternatives=alternatives)


def _reraises(handler: ast.ExceptHandler) -> bool:
    return bool(handler.body) and isinstance(handler.body[-1], ast.Raise)


def _blocks_of(node) -> list:
    """The statement lists directly under a compound statement (or a function)."""
    if node is None:
        return []
    out = [getattr(node, name) for name in ("body", "orelse", "finalbody")
           if isinstance(getattr(node, name, None), list)]
    out += [handler.body for handler in getattr(node, "handlers", ())]
    out += [case.body for case in getattr(node, "cases", ())]
    return out


def _joins_surely(stmt, names: frozenset) -> bool:
    """Whether running ``stmt`` surely calls one of the rendezvous ``names``
    (in both arms of an ``if``; in the body of a ``try`` or ``with``)."""
    if isinstance(stmt, ast.If):
        return bool(stmt.orelse) and any(_joins_surely(s, names) for s in stmt.body) \
            and any(_joins_surely(s, names) for s in stmt.orelse)
    if isinstance(stmt, (ast.Try, ast.With, ast.AsyncWith)) or type(stmt).__name__ == "TryStar":
        return any(_joins_surely(s, names) for s in stmt.body)
    if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While, ast.Match, ast.FunctionDef, ast.AsyncFunctionDef,
                         ast.ClassDef)):
        return False
    for sub in fast_walk(stmt):
        if isinstance(sub, ast.Call):
            func = sub.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
            if name in names:
                return True
    return False


def _postdominated(ipdom: list, node: int, by: int) -> bool:
    """Whether ``by`` is ``node`` or on its chain of immediate post-dominators."""
    seen = 0
    while node is not None and seen <= len(ipdom):
        if node == by:
            return True
        node = ipdom[node]
        seen += 1
    return False
