"""localgroups walks a function's own nodes written out (no generator per
node): the loops and binding nodes it finds, and the locals naming a group,
are those of astwalk.own_nodes, in its order (issue 13)."""

from __future__ import annotations

import ast
import textwrap
import types

from cslint.analysis import localgroups
from cslint.analysis.astwalk import LOOPS, own_nodes

_SOURCE = textwrap.dedent("""
    def outer(group, items):
        global counter
        comm = get_tp_group().device_group
        alias = comm
        for index, item in enumerate(items):
            total = [x for x in item if x]
            while total:
                total = total[1:]
        def inner(comm):
            shadow = get_pp_group()
            return shadow
        helper = lambda g=(made := 1): g
        class Local:
            field = get_ep_group()
        with open(items) as handle, other() as (left, right):
            async_like = handle
        try:
            pass
        except Exception as error:
            group_copy = alias
        return comm, alias, helper, Local, error
""")


def _reference(func) -> tuple:
    loops, bindings = [], []
    for node in own_nodes(func):
        kind = type(node)
        if kind is ast.Name:
            if type(node.ctx) is not ast.Load:
                bindings.append(node)
            continue
        if kind in LOOPS:
            loops.append(node)
        if kind in localgroups._BINDING_TYPES:
            bindings.append(node)
    return tuple(loops), tuple(bindings)


def test_binding_nodes_are_own_nodes_in_order():
    tree = ast.parse(_SOURCE)
    funcs = [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.Lambda))]
    assert len(funcs) == 3
    for func in funcs:
        loops, bindings = localgroups._binding_nodes(types.SimpleNamespace(), func)
        expected_loops, expected_bindings = _reference(func)
        assert [id(n) for n in loops] == [id(n) for n in expected_loops]
        assert [id(n) for n in bindings] == [id(n) for n in expected_bindings]
    outer_loops, outer_bindings = localgroups._binding_nodes(types.SimpleNamespace(), funcs[0])
    assert len(outer_loops) == 2
    # nothing of the nested function, lambda or class body
    assert not {"shadow", "field", "g"} & {n.id for n in outer_bindings if type(n) is ast.Name}


def test_group_holding_names_skip_nested_definitions():
    func = ast.parse(_SOURCE).body[0]
    info = types.SimpleNamespace(func=func, param_names=frozenset({"group", "items"}))
    names = localgroups._group_holding_names(info)
    assert {"comm", "alias", "group_copy"} <= names
    assert not {"shadow", "field"} & names
