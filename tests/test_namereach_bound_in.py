"""namereach.bound_in: the names a statement of a function binds, worked out
once per statement (guards read bound_names of the same statements again,
uncached)."""

import ast

from cslint.analysis.function import FunctionInfo
from cslint.analysis.namereach import bound_in, bound_names
from cslint.analysis.scope import ModuleContext
from cslint.config import Settings
from cslint.presets import load_presets


def test_bound_in_is_bound_names_kept_per_statement():
    tree = ast.parse("def f(x):\n    a, b = x\n    for c in x: d = c\n    import os as e\n")
    ctx = ModuleContext("m.py", "m", tree, load_presets(["torch_distributed"]), Settings(), False)
    func = tree.body[0]
    info = FunctionInfo(ctx, func, "f", None, False, {})
    assert [bound_in(info, stmt) for stmt in func.body] == [bound_names(stmt) for stmt in func.body]
    assert bound_in(info, func.body[1]) == {"c", "d"} and bound_in(info, func.body[1]) is bound_in(info, func.body[1])
