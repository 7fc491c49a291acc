"""``FunctionScan.scan_calls`` hands a node that none of its branches past
the calls notes anything of straight to its children, after one set lookup
(``functionscan._NOTED_TYPES``), where it was compared with every type of
those branches in turn: most nodes the walk meets (an expression statement,
an ``if``, a comparison, an operator, a tuple) are such nodes (issue 13).
The set must name every type those branches test, or a branch added later
would never run."""

import ast
import inspect
import textwrap

from cslint.analysis import functionscan


def _types_tested(test: ast.AST) -> set:
    """The node types an ``elif`` test compares ``t`` with (``t is ast.X``, ``t in nested``)."""
    found = set()
    for node in ast.walk(test):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id == "t":
            for op, right in zip(node.ops, node.comparators):
                if isinstance(op, ast.Is) and isinstance(right, ast.Attribute) and isinstance(right.value, ast.Name) \
                        and right.value.id == "ast":
                    found.add(getattr(ast, right.attr))
                elif isinstance(op, ast.In) and isinstance(right, ast.Name) and right.id == "nested":
                    found.update((ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    return found


def test_the_noted_types_are_those_the_branches_past_the_calls_test():
    source = textwrap.dedent(inspect.getsource(functionscan.FunctionScan.scan_calls))
    branch = next(node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.If)
                  and ast.unparse(node.test) == "t is Call")
    tested = set()
    guarded = False
    while branch.orelse and len(branch.orelse) == 1 and isinstance(branch.orelse[0], ast.If):
        branch = branch.orelse[0]
        if ast.unparse(branch.test) == "t not in noted_types":
            guarded = True  # the lookup that hands every other node to its children
            continue
        tested |= _types_tested(branch.test)
    assert guarded
    assert tested and tested == set(functionscan._NOTED_TYPES)
