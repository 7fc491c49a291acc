"""bindings: what the syntax binds."""

from __future__ import annotations

import ast

from cslint.analysis.bindings import TARGET_STATEMENTS, statement_targets


def test_statement_targets_are_what_each_binding_statement_binds_or_deletes():
    # one spelling of a statement's targets (setfields, facts, memosyntax and funcaliases each wrote their own)
    source = ("a = b = f()\nc += 1\nd: int = 2\nfor e, g in xs: pass\nasync def h():\n    async for i in ys: pass\n"
              "    async with m() as j, n(): pass\nwith o() as (k, l), p() as q: pass\ndel r, s.t\nu\n")
    statements = ast.parse(source).body
    statements[4:5] = statements[4].body
    bound = [[ast.unparse(target) for target in statement_targets(stmt)] if type(stmt) in TARGET_STATEMENTS
             else None for stmt in statements]
    assert bound == [["a", "b"], ["c"], ["d"], ["(e, g)"], ["i"], ["j"], ["(k, l)", "q"], ["r", "s.t"], None]
    assign = statements[0]
    statement_targets(assign).clear()  # a copy: the statement keeps its targets
    assert len(assign.targets) == 2

