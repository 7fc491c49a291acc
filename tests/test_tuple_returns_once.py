"""Whether a function of the module returns tuples of one length and that
length are one question (``ModuleContext.returns_tuples`` is
``returned_tuple_length(ref) > 0``): the function's returns are walked once
for both, and kept in one table (issue 13)."""

import ast
import textwrap

from cslint.analysis import shapes
from cslint.analysis.callrefs import func_ref, method_ref
from cslint.analysis.scope import ModuleContext
from cslint.config import Settings
from cslint.presets import load_presets

KNOWLEDGE = load_presets(["torch_distributed"])

MODULE = textwrap.dedent("""
    def pair(group):
        if group is None:
            return None
        return (0, 1) if group.single else (group.rank, group.size)

    def mixed(flag):
        if flag:
            return 1, 2
        return 1, 2, 3

    def empty():
        return ()

    def silent():
        pass

    class Split:
        def split(self, x):
            return x[:1], x[1:]
""")


def _ctx() -> ModuleContext:
    return ModuleContext("m.py", "m", ast.parse(MODULE), KNOWLEDGE, Settings(), False)


def test_both_questions_walk_a_function_once(monkeypatch):
    walks = []
    walk = shapes._one_return_shape

    def counted(function, shape_of):
        walks.append(function.name)
        return walk(function, shape_of)

    monkeypatch.setattr(shapes, "_one_return_shape", counted)
    ctx = _ctx()
    for name in ("pair", "mixed", "empty", "silent"):
        ref = func_ref("m", name)
        ctx.returns_tuples(ref)
        ctx.returned_tuple_length(ref)
        ctx.returns_tuples(ref)
    ref = method_ref("m:Split", "split")
    ctx.returned_tuple_length(ref)
    ctx.returns_tuples(ref)
    assert walks == ["pair", "mixed", "empty", "silent", "split"]


def test_the_answers_are_those_of_the_returns():
    ctx = _ctx()
    answers = {name: (ctx.returns_tuples(func_ref("m", name)), ctx.returned_tuple_length(func_ref("m", name)))
               for name in ("pair", "mixed", "empty", "silent", "absent")}
    assert answers == {"pair": (True, 2), "mixed": (False, 0), "empty": (False, 0), "silent": (False, 0),
                       "absent": (False, 0)}
    assert (ctx.returns_tuples(method_ref("m:Split", "split")), ctx.returned_tuple_length(
        method_ref("m:Split", "split"))) == (True, 2)
    assert not ctx.returns_tuples(func_ref("other", "pair"))  # (another module's function: not this one's to say)
