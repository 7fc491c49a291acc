"""FunctionInfo.param_names: the names its parameters bind, ``*args`` and
``**kwargs`` bare, worked out once (nine readers each built the set again
from ``params``, which spells them with their stars)."""

import ast

from cslint.analysis.function import FunctionInfo
from cslint.analysis.scope import ModuleContext
from cslint.config import Settings
from cslint.presets import load_presets


def test_param_names_are_the_bare_names_of_params_built_once():
    tree = ast.parse("class C:\n    def m(self, a, /, b, *args, c, **kwargs): pass\n")
    ctx = ModuleContext("m.py", "m", tree, load_presets(["torch_distributed"]), Settings(), False)
    info = FunctionInfo(ctx, tree.body[0].body[0], "C.m", ("m", "C"), True, {})
    assert info.params == ("self", "a", "b", "*args", "c", "**kwargs")
    assert info.param_names == {"self", "a", "b", "args", "c", "kwargs"}
    assert info.param_names is info.param_names


def test_passed_params_are_those_past_the_receiver_with_their_bare_names():
    # (rank_param_sources, enclosing_params and entry_env each skipped the receiver and took the stars off again)
    tree = ast.parse("class C:\n    def m(self, a, *args, **kwargs): pass\n    @staticmethod\n    def s(x, *ys): pass\n"
                     "def f(p, q): pass\n")
    ctx = ModuleContext("m.py", "m", tree, load_presets(["torch_distributed"]), Settings(), False)
    method, static = tree.body[0].body
    infos = [FunctionInfo(ctx, method, "C.m", ("m", "C"), True, {}),
             FunctionInfo(ctx, static, "C.s", ("m", "C"), True, {}),
             FunctionInfo(ctx, tree.body[1], "f", None, False, {})]
    assert [info.passed_params for info in infos] == [((1, "a"), (2, "args"), (3, "kwargs")),
                                                      ((0, "x"), (1, "ys")), ((0, "p"), (1, "q"))]
