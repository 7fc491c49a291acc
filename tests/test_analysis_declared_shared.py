"""The names a function, or a function nested in it, declares ``global`` or
``nonlocal`` (namereach.py: such a name's binding reaching a read is never
followed, a call could rebind it).  The function's own declarations and its
nested definitions are noted by the call scan's one walk of its body
(functionscan.py), so only the nested definitions are walked again (issue 13)."""

import ast
import textwrap

from cslint.analysis import namereach
from cslint.analysis.astwalk import walked
from cslint.analysis.function import FunctionInfo
from cslint.analysis.scope import ModuleContext
from cslint.api import check_source
from cslint.config import Settings
from cslint.presets import load_presets
from test_analysis_none_part import AGREED, HELPER

KNOWLEDGE = load_presets(["torch_distributed"])

SHARED = """
    COUNT = 0

    def outer(x):
        global COUNT
        total = 0

        def add(v):
            nonlocal total
            total += v

        class Box:
            def reset(self):
                global LAST
                LAST = None

        add(x)
        return lambda: total
"""


def _info(source: str) -> FunctionInfo:
    tree = ast.parse(textwrap.dedent(source))
    ctx = ModuleContext("m.py", "m", tree, KNOWLEDGE, Settings(), False)
    func = next(node for node in tree.body if type(node) is ast.FunctionDef)
    return FunctionInfo(ctx, func, func.name, None, False, {})


def test_the_call_scan_notes_its_own_declarations_and_its_nested_definitions():
    info = _info(SHARED)
    info.scan_calls()
    assert info.declared_shared == frozenset({"COUNT"})
    assert sorted(node.name for node in info.nested_definitions) == ["Box", "add"]


def test_the_declared_names_are_those_a_walk_of_the_whole_function_finds():
    info = _info(SHARED)
    every = {name for node in walked(info.func) if type(node) in (ast.Global, ast.Nonlocal) for name in node.names}
    assert namereach.declared_shared(info) == frozenset(every) == frozenset({"COUNT", "total", "LAST"})
    assert namereach.declared_shared(_info("def plain(x):\n    y = x\n    return y\n")) == frozenset()


DECLARED = HELPER + """

    def attention_core(ex, x, key):
        {declared}
        out = ex.pipelined(x, key)
        if out is not None:
            return out
        dist.all_reduce(x, group=ex.group)
        return x
"""


def _found(declared: str) -> set:
    source = textwrap.dedent(DECLARED.format(declared=declared, **AGREED))
    return {f.code for f in check_source(source, report="per-site").findings if f.function == "attention_core"}


def test_a_name_the_function_declares_global_is_not_followed_to_its_binding():
    # the helper's result is the binding reaching the test, whose None-ness the ranks agree on, also beside a
    # nested function that declares another name ``nonlocal``
    assert _found("pass") == set()
    assert _found("def reset():\n            nonlocal x\n            x = None") == set()
    # declared ``global``, a call could rebind it: the test reads the whole value, this rank's rows
    assert "CSL102" in _found("global out")
