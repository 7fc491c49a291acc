"""The local bindings and tests the folds of a function read
(``feasibility._local_bindings``: a name bound once to a foldable value, a
flag assigned nothing but constants) come from the nodes the call scan noted
on its one walk of the body (``FunctionScan.binding_nodes``), not from a
second walk of every node of every deep function (issue 13).  They are what
that walk gave: the body's own bindings, none of a nested definition (its
body, its decorators) or of a lambda."""

import ast
import textwrap

import pytest

from cslint.analysis import feasibility
from cslint.analysis.astwalk import CHILDREN
from cslint.analysis.function import FunctionInfo
from cslint.analysis.scope import ModuleContext
from cslint.api import check_source
from cslint.config import Settings
from cslint.presets import load_presets

KNOWLEDGE = load_presets(["torch_distributed"])

FUNCTION = """
    import torch.distributed as dist

    def step(rank, world_size, xs, *args, flag=False, **kwargs):
        publish = False
        multi = world_size != 1
        typed: bool = True
        count = 0
        count += 1
        a, (b, *c) = xs
        first = second = rank
        self_value = self.x = 1
        xs[0] = 2
        del kwargs
        import os.path as osp, json
        from math import *
        global G
        for i, j in enumerate(xs):
            if (n := len(xs)) > 2 and [k for k in xs if k]:
                publish = True
        while flag:
            with open(osp.join("a", "b")) as (fh, _):
                pass
        try:
            pass
        except OSError as err:
            pass
        async def helper(q=(hidden := 1)):
            publish = 3
        @decorate([d for d in xs], (deco := 2))
        class Inner:
            publish = 4
        later = lambda: (inside := 5)
        args = None
        if publish:
            dist.all_reduce(xs)
"""


def _function(source: str) -> FunctionInfo:
    tree = ast.parse(textwrap.dedent(source))
    ctx = ModuleContext("m.py", "m", tree, KNOWLEDGE, Settings(), False)
    func = tree.body[-1]
    return FunctionInfo(ctx, func, func.name, None, False, {})


def _walked_bindings(func: ast.AST, params: tuple, tests: list) -> dict:
    """The walk of the body the scan's nodes stand in for (every node, nested definitions and lambdas left out)."""
    out, declared, stack = {}, set(), list(func.body)
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            out.setdefault(node.name, []).append(None)
            continue
        if kind is ast.Lambda:
            continue
        if kind is ast.If or kind is ast.While:
            tests.append(node.test)
        if kind in (ast.Global, ast.Nonlocal):
            declared.update(node.names)
        elif kind is ast.Assign:
            for target in node.targets:
                if isinstance(target, ast.Name):
                    out.setdefault(target.id, []).append(node.value if len(node.targets) == 1 else None)
                else:
                    feasibility._bind_other(target, out)
        elif kind is ast.AnnAssign:
            if isinstance(node.target, ast.Name):
                out.setdefault(node.target.id, []).append(node.value)
        elif kind in (ast.AugAssign, ast.For, ast.AsyncFor, ast.comprehension, ast.NamedExpr):
            feasibility._bind_other(node.target, out)
        elif kind in (ast.With, ast.AsyncWith):
            for item in node.items:
                if item.optional_vars is not None:
                    feasibility._bind_other(item.optional_vars, out)
        elif kind is ast.ExceptHandler and node.name:
            out.setdefault(node.name, []).append(None)
        elif kind in (ast.Import, ast.ImportFrom):
            for alias in node.names:
                out.setdefault((alias.asname or alias.name).split(".")[0], []).append(None)
        elif kind is ast.Delete:
            for target in node.targets:
                feasibility._bind_other(target, out)
        read = CHILDREN[kind]
        stack += read(node) if read is not None else ()
    for name in declared:
        out[name] = [None]
    for name in params:
        if name.lstrip("*") in out:
            out[name.lstrip("*")].append(None)
    return out


def test_the_bindings_are_read_from_the_call_scan_alone(monkeypatch):
    info = _function(FUNCTION)
    info.scan_calls()

    class NoWalk(dict):
        def __getitem__(self, kind):
            raise AssertionError("the folds walked the function's body again")

    monkeypatch.setattr(feasibility, "CHILDREN", NoWalk(), raising=False)
    folds = feasibility.Feasibility(info)
    assert folds.flags == frozenset({"publish"})  # False, then True: constants alone (not the nested 3 or 4)
    assert set(folds.aliases) == {"multi", "typed", "later"}  # bound once, to one value


def test_the_scan_gives_the_bindings_and_tests_a_walk_of_the_body_gives():
    info = _function(FUNCTION)
    walked_tests: list = []
    walked = _walked_bindings(info.func, info.params, walked_tests)
    folds = feasibility.Feasibility(info)  # scans the function itself
    assert folds._bindings == walked
    assert [id(test) for test in folds._tests] == [id(test) for test in walked_tests]
    # nothing of a nested definition (its defaults, body, decorators) or a lambda
    assert {"hidden", "deco", "d", "inside", "q"}.isdisjoint(folds._bindings)
    assert {"helper", "Inner", "k", "n", "fh", "err", "osp", "json", "G", "args", "kwargs"} <= set(folds._bindings)


@pytest.mark.parametrize("bound, reported", [("publish = False", []), ("publish = xs.pop()", [10])])
def test_a_constant_flag_still_folds_and_a_computed_one_stays_reported(bound, reported):
    source = textwrap.dedent(f"""
        import torch.distributed as dist

        def step(rank, xs):
            {bound}
            def inner():
                publish = True
            if rank == 0:
                if publish:
                    dist.all_reduce(xs)
    """)
    result = check_source(source, report="per-site", presets=["torch_distributed"])
    assert sorted(f.line for f in result.findings) == reported


def test_the_binding_nodes_are_scanned_on_first_read(monkeypatch):
    # read before any scan, they run it (no caller reads ``local_names`` for its side effect first)
    info = _function(FUNCTION)
    nodes = info.binding_nodes
    assert {type(node) for node in nodes} >= {ast.Assign, ast.AnnAssign, ast.If}
    scanned = _function(FUNCTION)
    scanned.scan_calls()
    assert [ast.dump(node) for node in nodes] == [ast.dump(node) for node in scanned.binding_nodes]

    def scanned_again(self):
        raise AssertionError("the scan ran again")

    monkeypatch.setattr(FunctionInfo, "scan_calls", scanned_again)
    assert info.binding_nodes is nodes and info.local_names  # read once scanned: no walk more
