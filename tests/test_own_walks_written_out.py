"""Readers that take a function's own nodes (astwalk.own_nodes) or every
node (astwalk.walk) walk them written out, with no generator resumed per
node: what each finds is what the generator's reading finds, on a fixture
of nested definitions, lambdas and classes and on every function of the
analyser's own source; nothing of a nested definition is read where
own_nodes leaves it out (issue 13)."""

from __future__ import annotations

import ast
import glob
import os
import textwrap
import types

from cslint.analysis import classargs, orders, positions, spreadlengths
from cslint.analysis.astwalk import own_nodes, parameters, scoped_walk, walk

_SOURCE = textwrap.dedent("""
    class Holder:
        def __init__(self, names, items):
            self.names = set(names)
            self.kept = frozenset(items)
            self.mixed = set(items)
            def later():
                self.mixed = sorted(items)
                self.kept = list(items)
            fill = lambda: setattr(self, "names", [])
            class Inner:
                mixed = [1]
            self.later = later

        def rebuild(self, names):
            self.mixed |= set(names)
            self.names.sort()

    def outer(group, items, *rest, flag=None, **extra):
        global counter
        picked = set(items)
        other = {x for x in items}
        listed = sorted(picked)
        chosen, spare = items
        def inner(picked):
            other = [1]
            nonlocal_like = picked
            return other
        helper = lambda g=(made := 1): g
        class Local:
            group = get_ep_group()
            def method(self):
                yield group
        items.append(flag)
        for index, item in enumerate(rest):
            count = index
        with open(group) as handle, other_ctx() as (left, right):
            total = handle
        try:
            pass
        except Exception as error:
            spare = error
        return picked, other, inner, helper, Local

    def generator(values):
        def nested():
            yield 1
        for value in values:
            yield value

    def plain(values):
        gen = lambda: (yield)
        return [v for v in values]

    def reader(values, flags):
        values.append(1)
        flags.index(2)
        return values[0], flags[1]

    def shadowed(values, keys):
        def inner(keys):
            return keys
        return values[0], keys[0]

    def declares(count):
        nonlocal_count = count
        def bump():
            nonlocal count
            count = 1
        return count
""")


def _functions() -> list:
    """Every function and lambda of the fixture and of the analyser's own source."""
    trees = [ast.parse(_SOURCE)]
    root = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "cslint", "analysis")
    for path in sorted(glob.glob(os.path.join(root, "*.py"))):
        with open(path, encoding="utf-8") as f:
            trees.append(ast.parse(f.read()))
    return [node for tree in trees for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))]


def _rebound(func) -> set:
    out = set()
    for node in own_nodes(func):
        if type(node) is ast.Name and type(node.ctx) is not ast.Load:
            out.add(node.id)
        elif type(node) in (ast.Global, ast.Nonlocal):
            out.update(node.names)
    return out


def _closed_over(func, name: str) -> bool:
    own = 0
    for node in own_nodes(func):
        if type(node) is ast.Name:
            own += node.id == name
        elif type(node) in (ast.Global, ast.Nonlocal) and name in node.names:
            return True
    seen = 0
    for node, names in scoped_walk(func, frozenset((name,))):
        if type(node) is ast.Name and node.id == name and names:
            seen += 1
            if seen > own:
                return True
    return False


def _held_in_place(func, wanted: dict) -> dict:
    for node in walk(func):
        if type(node) is ast.Name and type(node.ctx) is not ast.Load:
            wanted.pop(node.id, None)
        elif type(node) is ast.Attribute and type(node.value) is ast.Name and node.value.id in wanted \
                and (type(node.ctx) is not ast.Load or node.attr not in positions._LIST_READS):
            wanted.pop(node.value.id, None)
        elif type(node) is ast.arg and node.arg in wanted and node not in parameters(func.args, starred=False):
            wanted.pop(node.arg, None)
        if not wanted:
            break
    return wanted


def _params(func) -> list:
    args = func.args
    return [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]


def test_readers_find_what_the_generators_find():
    functions = _functions()
    assert len(functions) > 1000
    for func in functions:
        assert classargs._rebound(func) == _rebound(func)
        names = sorted(_rebound(func) | {"self", "values", "count"}) if type(func) is not ast.Lambda else ()
        for name in names:  # (asked of functions with a statement body)
            assert spreadlengths._closed_over(func, name) is _closed_over(func, name), (func.lineno, name)
        wanted = {name: True for name in _params(func)}
        info = types.SimpleNamespace(func=func)
        assert positions._held_in_place(info, dict(wanted)) == _held_in_place(func, dict(wanted)), func.lineno


def test_nested_definitions_are_not_read():
    tree = ast.parse(_SOURCE)
    funcs = {node.name: node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
    outer = funcs["outer"]
    rebound = classargs._rebound(outer)
    assert {"counter", "picked", "other", "chosen", "spare", "index", "count", "total"} <= rebound
    assert not {"nonlocal_like", "g"} & rebound  # bound in the nested function, the lambda's parameter
    assert spreadlengths._closed_over(funcs["declares"], "count")  # the nested function declares it nonlocal
    assert spreadlengths._closed_over(outer, "group")  # the class body reads it
    assert not spreadlengths._closed_over(outer, "listed")
    held = positions._held_in_place(types.SimpleNamespace(func=funcs["reader"]), {"values": 1, "flags": 1})
    assert held == {"flags": 1}  # values.append moves elements; flags.index reads in place
    held = positions._held_in_place(types.SimpleNamespace(func=funcs["shadowed"]), {"values": 1, "keys": 1})
    assert held == {"values": 1}  # a nested function's parameter shadows keys


def test_ordered_locals_and_set_fields_skip_nested_definitions():
    tree = ast.parse(_SOURCE)
    outer = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "outer")
    found = orders._ordered_locals(outer, {}, lambda expr, names: expr if isinstance(expr, (ast.Call, ast.SetComp)) else None)
    # ``other`` is bound again to a list only in the nested function; ``chosen`` comes unpacked
    assert set(found) == {"picked", "other", "listed"}
    ctx = types.SimpleNamespace(tree=tree)
    fields = orders.class_set_fields(ctx, "mod:Holder")
    # ``mixed``, ``kept`` assigned again only in a nested function; ``names`` sorted in place; the class
    # body of Inner is not a method's
    assert set(fields) == {"kept", "mixed"}


def test_holds_kind_is_any_of_walk():
    from cslint.analysis.astwalk import holds_kind

    kinds_asked = [frozenset({ast.Call}), frozenset({ast.Return, ast.Raise}), frozenset({ast.NamedExpr}),
                   frozenset({ast.Continue, ast.Break, ast.Return, ast.Raise}), positions._MAKES_ANEW]
    functions = _functions()
    for func in functions[:3000]:
        for node in [func, *func.body] if type(func) is not ast.Lambda else [func, func.body]:
            for kinds in kinds_asked:
                assert holds_kind(node, kinds) is any(type(sub) in kinds for sub in walk(node))
    assert holds_kind(ast.parse("x = [f(y) for y in z]").body[0].value, frozenset({ast.Call}))
    assert not holds_kind(ast.parse("x = a.b[c] + 1").body[0], frozenset({ast.Call}))
