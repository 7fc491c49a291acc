"""astwalk.plain_bindings: the local names every binding of which is a plain
``name = value`` the caller accepts (shared by the arms, tensor-arm and
single-rank-side readers)."""

import ast

from cslint.analysis.astwalk import plain_bindings

SOURCE = """\
def f(param):
    made = build()
    made = build()
    mixed = build()
    mixed += 1
    other = 3
    looped = build()
    for looped in range(2):
        pass
    param = build()
    shadowed = build()

    def inner():
        nonlocal shadowed
        shadowed = 1

    scoped = build()

    def elsewhere():
        scoped = 2
        return scoped

    try:
        caught = build()
    except ValueError as caught:
        pass
    return made, mixed, other, looped, shadowed, scoped, caught
"""


def test_names_every_binding_of_which_is_accepted():
    func = ast.parse(SOURCE).body[0]
    bound = plain_bindings(func, lambda value: type(value) is ast.Call)
    assert sorted(bound) == ["made", "scoped"]
    assert [stmt.lineno for stmt in sorted(bound["made"], key=lambda stmt: stmt.lineno)] == [2, 3]


def test_accept_decides_which_values_count():
    func = ast.parse(SOURCE).body[0]
    assert sorted(plain_bindings(func, lambda value: type(value) is ast.Constant)) == ["other"]
