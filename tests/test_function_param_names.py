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
