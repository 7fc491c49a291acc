"""setfields._handed_fields reads every node of each method it walks as one
list (astwalk.walked), with no generator resumed per node; what it finds is
what a walk node by node finds."""

from __future__ import annotations

import ast
import textwrap

from cslint.analysis import setfields

SOURCE = textwrap.dedent("""
    class Worker:
        def step(self, t):
            self.group = pick_group()
            self.scale = 2
            self._sync(t)

        def other(self, t):
            self.group = None
            self._sync(t)

        def _sync(self, t):
            all_reduce(t, group=self.group)
            return self.scale

        def _named(self, t):
            return self.group

        def run(self):
            callback = self._named
            self.group = 1
            return self._named(callback)
""")


def _handed(deep):
    cls = ast.parse(SOURCE).body[0]
    return setfields._handed_fields(cls, deep)


def test_the_methods_are_read_as_one_list(monkeypatch):
    expected = _handed({"step", "other", "run"})
    assert expected == {"_sync": frozenset({"group"})}  # ``scale`` is assigned by one of its two callers only

    def no_generator_walk(node):
        raise AssertionError("walked node by node")

    monkeypatch.setattr(setfields, "fast_walk", no_generator_walk)
    assert _handed({"step", "other", "run"}) == expected
    # ``_named`` is named otherwise than in a call (handed out as a callable): nothing is handed it
    assert "_named" not in _handed({"run"})
    # with ``step`` its only caller that reaches a collective, it is handed both fields ``step`` assigns
    assert _handed({"step"}) == {"_sync": frozenset({"group", "scale"})}
