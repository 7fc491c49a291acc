"""Where a type test has told what a name holds: the reads of a name inside the arm that a test
``isinstance(name, C)`` for a class no data is of lets run (``Preset.no_data_classes``: a model, an
optimizer, a learning-rate scheduler).

This rank's share of the data (``presets.KIND_ALIKE_KINDS``: a prepared data loader, a batch, what a
rank hands to a gather) is data: it never passes such a test.  A list that holds a rank's data loader
beside the model and the optimizer it prepared holds elements of different kinds; the element a loop
picks by ``isinstance(obj, torch.nn.Module)`` is the model, never the loader, so the model (and every
field later read from it) does not carry the loader's data.  The dataflow does not tell a list's
elements apart, so the narrowing is read where the name is read: such a read is seen through
:data:`~cslint.analysis.atoms.PASSED_NO_DATA_TEST`, which drops those sources and keeps every other
(a parameter or a call's result, resolved later, is wrapped, so what a caller passes is narrowed too).

Only arms that cannot rebind the name count (no store of it inside the arm), and no read inside a
nested function or lambda (it may run after the name was rebound).  A test against any other class,
or a tuple holding one, narrows nothing: what such a class may be is unknown.
"""

from __future__ import annotations

import ast

from .scope import canonical_text
from .syntax import dotted

NOTHING_NARROWED = frozenset()

_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def narrowed_reads(info) -> frozenset:
    """The ``id`` of every ``ast.Name`` load of the body of ``info`` (a ``FunctionInfo``) that reads a
    name inside the arm of a type test for classes no data is of (see the module docstring)."""
    ctx = info.ctx
    classes = ctx.knowledge.no_data_classes
    if not classes or not _tests_a_no_data_class(info.calls_by_statement, classes, ctx.imports):
        return NOTHING_NARROWED
    func = info.func
    found: list = []
    body = func.body if isinstance(func.body, list) else [func.body]
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, _NESTED):
            continue
        if isinstance(node, (ast.If, ast.IfExp)):
            name, passed = _tested_name(node.test, classes, ctx.imports)
            if name is not None:
                arm = node.body if passed else node.orelse
                _note_reads(name, arm if isinstance(arm, list) else [arm], found)
        stack.extend(ast.iter_child_nodes(node))
    return frozenset(found) if found else NOTHING_NARROWED


def _tests_a_no_data_class(calls_by_statement: dict, classes: frozenset, imports: dict) -> bool:
    """Whether one of the function's own calls (``FunctionInfo.calls_by_statement``, from its one cheap
    walk) is such a type test: most functions make none, and are not walked again."""
    for calls in calls_by_statement.values():
        for call in calls:
            func = call.func
            if type(func) is ast.Name and func.id == "isinstance" \
                    and _type_tested_name(call, classes, imports) is not None:
                return True
    return False


def _tested_name(test, classes: frozenset, imports: dict) -> tuple:
    """``(name, True)`` for a test that holds only where ``name`` passed ``isinstance(name, C)`` (the test
    itself or an operand of an ``and``), ``(name, False)`` for ``not isinstance(name, C)``, whose
    ``else`` holds that; ``(None, None)`` otherwise."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        name = _type_tested_name(test.operand, classes, imports)
        return (name, False) if name is not None else (None, None)
    operands = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    for operand in operands:
        name = _type_tested_name(operand, classes, imports)
        if name is not None:
            return name, True
    return None, None


def _type_tested_name(test, classes: frozenset, imports: dict):
    """The name ``isinstance(name, C)`` tests, where every class named is one no data is of."""
    if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance"
            and len(test.args) == 2 and not test.keywords and isinstance(test.args[0], ast.Name)):
        return None
    kinds = test.args[1]
    named = kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]
    if not named or any(canonical_text(dotted(kind), imports) not in classes for kind in named):
        return None
    return test.args[0].id


def _note_reads(name: str, arm: list, found: list) -> None:
    """Add the loads of ``name`` in ``arm`` to ``found``, unless ``arm`` may bind ``name`` again."""
    reads = []
    stack = list(arm)
    while stack:
        node = stack.pop()
        if isinstance(node, _NESTED):
            if not isinstance(node, ast.Lambda) and node.name == name:
                return  # (a definition of that name binds it)
            continue
        if isinstance(node, ast.Name) and node.id == name:
            if not isinstance(node.ctx, ast.Load):
                return
            reads.append(id(node))
        elif isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name == name:
            return
        elif isinstance(node, ast.MatchMapping) and node.rest == name:
            return
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and any(
                (alias.asname or alias.name).split(".")[0] == name for alias in node.names):
            return
        stack.extend(ast.iter_child_nodes(node))
    found.extend(reads)
