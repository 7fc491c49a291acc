"""The fast AST walk visits what ``ast.walk`` visits, in the same order, less
the nodes no analysis reads as nodes (contexts, operators, import aliases)."""

import ast
import pathlib

import pytest

from cslint.analysis.astwalk import (children_into, imported_names, iter_children, own_returns, own_yields, param_names,
                                     parameters, walk, walked)

#: node kinds the fast walk leaves out (read through their parent's fields)
_NOT_VISITED = (ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop, ast.alias)

SOURCE = '''
import os, sys as system
from . import sibling
global_value: int = 1
annotated: "list[int]"
(parenthesised): int = 2
def f(a, /, b=1, *args, c, d=None, e, **kwargs) -> int:
    global g
    x = {**kwargs, "k": a, None: b}
    y = [i for i in args if i async for j in b] if a else {k: v for k, v in x.items()}
    del x["k"], y
    z = lambda q, *r, s=1, **t: (q, *r, s)
    w = f"{a!r:>{b}} {c}"
    a += -b if not c else ~d
    assert a < b <= c, "message"
    with open(a) as (h, i), open(b):
        pass
    try:
        raise ValueError(a) from b
    except (ValueError, TypeError) as error:
        return error
    else:
        yield a
    finally:
        print(a[1:2:3], a[...])
    match a:
        case [1, *rest] | {"k": 2, **other} if rest:
            pass
        case Point(x=0, y=None) | True | None | -1 | 1 + 2j:
            pass
        case str() as text:
            pass
    while a:
        break
    for i in range(3):
        continue
    else:
        nonlocal_value = (yield from b)
    return await a
class C(Base, metaclass=Meta):
    @decorator(1)
    async def m(self, *, k=3):
        async with a as b:
            async for c in d:
                pass
'''


def _slow(tree):
    return [node for node in ast.walk(tree) if not isinstance(node, _NOT_VISITED)]


def _trees():
    yield "sample", ast.parse(SOURCE)
    package = pathlib.Path(__file__).resolve().parent.parent / "cslint"
    for path in sorted(package.rglob("*.py"))[:40]:
        yield str(path), ast.parse(path.read_bytes())


@pytest.mark.parametrize("name,tree", list(_trees()), ids=lambda value: value if isinstance(value, str) else "")
def test_walk_matches_ast_walk_less_contexts_and_operators(name, tree):
    assert [id(node) for node in walk(tree)] == [id(node) for node in _slow(tree)], name


@pytest.mark.parametrize("name,tree", list(_trees())[:8], ids=lambda value: value if isinstance(value, str) else "")
def test_walked_is_walk_as_one_list(name, tree):
    assert [id(node) for node in walked(tree)] == [id(node) for node in walk(tree)], name


def test_children_are_ast_children_less_contexts_and_operators():
    tree = ast.parse(SOURCE)
    seen_types = set()
    for node in ast.walk(tree):
        out: list = []
        children_into(node, out)
        expected = [child for child in ast.iter_child_nodes(node) if not isinstance(child, _NOT_VISITED)]
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            expected = []
        assert [id(c) for c in out] == [id(c) for c in expected], ast.dump(node)[:200]
        assert [id(c) for c in iter_children(node)] == [id(c) for c in expected]
        seen_types.add(type(node))
    # the sample covers the fields that hold None or a plain value among nodes
    assert {ast.Dict, ast.arguments, ast.MatchSingleton, ast.AnnAssign, ast.JoinedStr} <= seen_types


def test_nodes_built_by_hand_without_some_fields_are_walked_field_by_field():
    # the analysis builds a few nodes itself (a dataclass's ``__init__``, a
    # ``Module`` around a block): a field left out holds no child
    callee, argument = ast.Name(id="f"), ast.Name(id="x")
    call = ast.Call(func=callee)  # no ``args``, no ``keywords``
    assert [id(node) for node in walk(call)] == [id(call), id(callee)]
    returned = ast.Return()  # no ``value``
    assert list(walk(returned)) == [returned]
    keyed = ast.Dict(keys=[None, argument], values=[callee, argument])
    assert [id(c) for c in iter_children(keyed)] == [id(argument), id(callee), id(argument)]
    out: list = []
    children_into(ast.Expr(value=call), out)
    assert out == [call]


def test_imported_names_are_what_an_import_binds():
    """The walk leaves import aliases out, so every analysis asks
    ``imported_names`` what an import binds: the first part of a dotted
    module, or its ``as`` name."""
    statements = ast.parse("import os.path, sys as system\nfrom .pkg import a, b as c\nfrom m import *").body
    assert [imported_names(statement) for statement in statements] == [["os", "system"], ["a", "c"], ["*"]]


def test_parameters_are_named_in_order_and_starred_ones_only_when_asked():
    # one spelling of a definition's parameter list: each caller says whether *args and **kwargs count
    func = ast.parse("def f(a, /, b=1, *args, c, d=None, **kwargs): pass").body[0]
    assert [p.arg for p in parameters(func.args, starred=False)] == ["a", "b", "c", "d"]
    assert [p.arg for p in parameters(func.args, starred=True)] == ["a", "b", "c", "d", "args", "kwargs"]
    assert param_names(func) == {"a", "b", "c", "d", "args", "kwargs"}
    assert param_names(func, starred=False) == {"a", "b", "c", "d"}
    lam = ast.parse("lambda q, *r: q", mode="eval").body
    assert param_names(lam) == {"q", "r"} and param_names(lam, starred=False) == {"q"}
    assert param_names(ast.parse("x = 1")) == frozenset()  # the module body has none


_RETURNING = '''
def outer(flag):
    def inner():
        return 1
    class Box:
        def get(self):
            return 2
    handler = lambda: (yield)
    for item in flag:
        if item:
            return [item]
    try:
        pass
    except ValueError:
        return None
    match flag:
        case [x]:
            return x
    return
'''


def test_own_returns_are_the_functions_own_return_statements():
    func = ast.parse(_RETURNING).body[0]
    assert sorted(node.lineno for node in own_returns(func)) == [11, 15, 18, 19]


def test_a_yield_in_a_nested_definition_makes_no_generator_and_one_in_a_return_does():
    func = ast.parse(_RETURNING).body[0]
    assert not own_yields(func)
    assert own_yields(ast.parse("def f():\n    return [(yield)]\n").body[0])
    assert own_yields(ast.parse("def f():\n    x = yield from g()\n    return [x]\n").body[0])
