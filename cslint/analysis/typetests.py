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

A test by class name, ``type(name).__name__ in NAMES``, is such a test where ``NAMES`` is a collection
the presets know holds only the names of such classes (``Preset.no_data_class_names``: a library's
list of its scheduler classes' names).  An ``or`` of such tests narrows where every operand narrows
the same name (its arm runs where one of them passed); an ``and`` where one operand does.

Only arms that cannot rebind the name count (no store of it inside the arm), and no read inside a
nested function or lambda (it may run after the name was rebound).  A test against any other class,
or a tuple holding one, narrows nothing: what such a class may be is unknown.
"""

from __future__ import annotations

import ast

from .astwalk import DEFINITIONS, imported_names
from .scope import canonical_text
from .syntax import dotted

NOTHING_NARROWED = frozenset()
#: the calls a type test makes (``isinstance(x, C)``, ``type(x).__name__``): a function calling neither has none
TYPE_TEST_CALLEES = frozenset({"isinstance", "type"})



def narrowed_reads(info) -> frozenset:
    """The ``id`` of every ``ast.Name`` load of the body of ``info`` (a ``FunctionInfo``) that reads a
    name inside the arm of a type test for classes no data is of (see the module docstring)."""
    ctx = info.ctx
    knowledge = ctx.knowledge
    known = _KnownClasses(knowledge.no_data_classes, _class_names_in_reach(ctx), ctx.imports)
    if not known.any() or not _tests_a_no_data_class(info.calls_by_statement, known):
        return NOTHING_NARROWED
    func = info.func
    found: list = []
    body = func.body if isinstance(func.body, list) else [func.body]
    stack = list(body)
    while stack:
        node = stack.pop()
        if type(node) in DEFINITIONS:
            continue
        if isinstance(node, (ast.If, ast.IfExp)):
            name, passed = _tested_name(node.test, known)
            if name is not None:
                arm = node.body if passed else node.orelse
                _note_reads(name, arm if isinstance(arm, list) else [arm], found)
        stack.extend(ast.iter_child_nodes(node))
    return frozenset(found) if found else NOTHING_NARROWED


def _class_names_in_reach(ctx) -> frozenset:
    """The collections of class names (``Preset.no_data_class_names``) a module can name: those of a package
    it imports (anywhere in it; once per module).  Most modules import none, and their functions' ``type(x)``
    calls, most of them for a message, are not walked for a test by class name."""
    try:
        return ctx._no_data_class_names
    except AttributeError:
        pass
    collections = ctx.knowledge.no_data_class_names
    if collections:
        imported = {target.partition(".")[0] for target in ctx.imports.values()}
        collections = frozenset([name for name in collections if name.partition(".")[0] in imported])
    ctx._no_data_class_names = collections
    return collections


class _KnownClasses:
    """What the presets say no data is of, read in one file: the classes (``isinstance``) and the
    collections of class names (``type(x).__name__ in NAMES``), both canonical dotted names."""

    def __init__(self, classes: frozenset, class_names: frozenset, imports: dict):
        self.classes = classes
        self.class_names = class_names
        self.imports = imports

    def any(self) -> bool:
        return bool(self.classes or self.class_names)

    def names_class(self, node) -> bool:
        return canonical_text(dotted(node), self.imports) in self.classes

    def names_class_names(self, node) -> bool:
        return bool(self.class_names) and canonical_text(dotted(node), self.imports) in self.class_names


def _tests_a_no_data_class(calls_by_statement: dict, known: _KnownClasses) -> bool:
    """Whether one of the function's own calls (``FunctionInfo.calls_by_statement``, from its one cheap
    walk) is such a type test, or a ``type(name)`` a test by class name may read: most functions make
    none, and are not walked again."""
    for calls in calls_by_statement.values():
        for call in calls:
            func = call.func
            if type(func) is not ast.Name:
                continue
            if func.id == "isinstance" and _type_tested_name(call, known) is not None:
                return True
            if func.id == "type" and known.class_names and _typed_name(call) is not None:
                return True
    return False


def _tested_name(test, known: _KnownClasses) -> tuple:
    """``(name, True)`` for a test that holds only where ``name`` passed a type test for classes no data
    is of, ``(name, False)`` for ``not`` such a test, whose ``else`` holds that; ``(None, None)``
    otherwise."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        name = _passed_name(test.operand, known)
        return (name, False) if name is not None else (None, None)
    name = _passed_name(test, known)
    return (name, True) if name is not None else (None, None)


def _passed_name(test, known: _KnownClasses):
    """The name that has passed a type test for classes no data is of wherever ``test`` holds: the test
    itself, an operand of an ``and``, or every operand of an ``or`` (each the same name)."""
    if isinstance(test, ast.BoolOp):
        if isinstance(test.op, ast.And):
            for operand in test.values:
                name = _passed_name(operand, known)
                if name is not None:
                    return name
            return None
        names = {_passed_name(operand, known) for operand in test.values}
        return names.pop() if len(names) == 1 else None  # (a None among them: one operand narrows nothing)
    if isinstance(test, ast.Compare):
        return _name_tested_by_class_name(test, known)
    return _type_tested_name(test, known)


def _type_tested_name(test, known: _KnownClasses):
    """The name ``isinstance(name, C)`` tests, where every class named is one no data is of."""
    if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance"
            and len(test.args) == 2 and not test.keywords and isinstance(test.args[0], ast.Name)):
        return None
    kinds = test.args[1]
    named = kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]
    if not named or not all(known.names_class(kind) for kind in named):
        return None
    return test.args[0].id


def _name_tested_by_class_name(test: ast.Compare, known: _KnownClasses):
    """The name ``type(name).__name__ in NAMES`` tests, where ``NAMES`` holds only names of classes no
    data is of."""
    if len(test.ops) != 1 or not isinstance(test.ops[0], ast.In):
        return None
    left = test.left
    if not (isinstance(left, ast.Attribute) and left.attr == "__name__" and known.names_class_names(test.comparators[0])):
        return None
    return _typed_name(left.value)


def _typed_name(node):
    """The name ``type(name)`` reads the class of."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "type" \
            and len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.Name):
        return node.args[0].id
    return None


def _note_reads(name: str, arm: list, found: list) -> None:
    """Add the loads of ``name`` in ``arm`` to ``found``, unless ``arm`` may bind ``name`` again."""
    reads = []
    stack = list(arm)
    while stack:
        node = stack.pop()
        if type(node) in DEFINITIONS:
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
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and name in imported_names(node):
            return
        stack.extend(ast.iter_child_nodes(node))
    found.extend(reads)
