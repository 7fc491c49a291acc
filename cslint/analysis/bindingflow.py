"""Implicit flow into the names a node binds, mixed into the dataflow (:class:`BindingFlow`): what the decisions the
node depends on make of what it binds, without the tests every rank reading those names took alike (a test one arm
of which leaves the function or its loop, an ``if`` holding every read in its arm: ``tests_read_alike``) and,
unless asked for the arm alone, those of the arms whose ways out add their flow back (``binding_skips``,
``armexits.py``).  A rank that left is gone: the ranks still here all took the arm; what leaves the function keeps
the full flow (:meth:`~cslint.analysis.dataflow.Dataflow.implicit`)."""

from __future__ import annotations

import ast
from .arms import names_bound as _names_bound
from .atoms import EMPTY
from .skipped import names_read_outside


class BindingFlow:
    """Mixed into :class:`~cslint.analysis.dataflow.Dataflow`: reads its graph, closures, arm exits and
    ``implicit``, and keeps its answers per node (``_binding_cache``, ``_alike``, ``_read_alike``) and per loop
    (``_read_outside``)."""

    def _names_read_outside(self, loop: ast.AST) -> frozenset:
        """Names the function reads outside ``loop``'s body (after it, before
        it, in its ``for`` iterable): where ranks that broke out meet the others."""
        found = self._read_outside.get(id(loop))
        if found is None:
            inside = loop.body + loop.orelse + ([loop.test] if isinstance(loop, ast.While) else [])
            found = self._read_outside[id(loop)] = names_read_outside(self.info.body, inside)
        return found

    def binding_implicit(self, n: int, arms: bool = True) -> frozenset:
        """Implicit flow into the local names node ``n`` binds: that of :meth:`implicit` without the tests
        the ranks reading those names all took alike (:meth:`tests_read_alike`) and, unless ``arms`` is
        False, those of the ``if`` arms whose ways out add it back (armexits).  A rank that took a
        ``return`` (or a ``break``) is gone: the ranks still here all took this arm, so what they bind
        does not differ by that test; and what the arm that leaves binds is read only there, by ranks
        that all took it.  What leaves the function (its result, the fields it
        writes) keeps the full flow, and so does a name read where the
        ranks that broke out of a loop meet the others again (unless a
        collective the leavers skip settles the test: settled.py)."""
        plain = not arms and n in self.arm_skips  # the arm's test kept: worked out anew
        skipped = self.tests_read_alike(n) if plain else self.binding_skips(n)
        if not skipped:
            return self.implicit(n)

        def left(d: int, _label) -> bool:
            return d in skipped

        atoms = self._deciding_atoms(n, left)
        if not atoms:
            return atoms
        if plain:
            return self._as_implicit(n, atoms, left)
        cached = self._binding_cache.get(n)
        if cached is not None and (cached[0] is atoms or cached[0] == atoms):
            return cached[1]
        result = self._as_implicit(n, atoms, left)
        self._binding_cache[n] = (atoms, result)
        return result

    def binding_skips(self, n: int) -> frozenset:
        """:meth:`tests_read_alike` of ``n`` and the tests of the arms whose
        ways out add their flow back (:mod:`cslint.analysis.armexits`), kept."""
        skipped = self._alike.get(n)
        if skipped is None:
            skipped = self._alike[n] = self.tests_read_alike(n) | self.arm_skips.get(n, EMPTY)
        return skipped

    def tests_read_alike(self, n: int) -> frozenset:
        """:meth:`_tests_read_alike` of ``n``, kept."""
        found = self._read_alike.get(n)
        if found is None:
            found = self._read_alike[n] = self._tests_read_alike(n)
        return found

    def _tests_read_alike(self, n: int) -> frozenset:
        """The decisions node ``n`` depends on that every rank reading a name ``n`` binds took alike:
        a test one arm of which leaves the function or its loop (either arm; no name ``n`` binds read
        outside a loop it breaks), an ``if`` outside loops holding every read in ``n``'s arm (ArmReads)."""
        closure = self.closures.get(n, ())
        if not closure:
            return EMPTY
        leaving, rejoining = self.leaving, self.rejoining
        bound = None
        out = []
        for d, label in closure:
            found = leaving.get(d)
            if found is not None:
                loop = found[1]
                if bound is None:
                    bound = _names_bound(self.graph.nodes[n].stmt)
                if loop is None or not (bound & self._names_read_outside(loop)):
                    out.append(d)
                continue
            if d in rejoining and not self.info.inside(self.graph.nodes[n].stmt, self.graph.nodes[d].stmt):
                out.append(d)  # every rank here fell through the ``if``; those that left are gone
                continue
            if bound is None:
                bound = _names_bound(self.graph.nodes[n].stmt)
            if bound and self._arm_reads.read_alike(d, label, bound):
                out.append(d)
        return frozenset(out)
