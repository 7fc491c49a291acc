"""What :mod:`~cslint.analysis.memofills` reads of one function's syntax,
in the file's pass: the memo fills it makes (``if G is None: G = call()``
of a global it declares), the module globals it rebinds, and the calls that
are a statement of its body before anything can return."""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import statement_lists, walk
from .bindings import TARGET_STATEMENTS, statement_targets
from .presence import none_test

#: calls a memo's path test may make on module globals and constants
TEST_BUILTINS = frozenset({"hasattr", "isinstance"})
#: what such a test never holds: it reads an object's parts, binds or defines something
_NOT_NAMES_ONLY = frozenset({ast.Attribute, ast.Subscript, ast.NamedExpr, ast.Lambda, ast.comprehension})


def _statements(func):
    """Every statement of a function's own body, nested blocks included (not
    the bodies of nested definitions); a handler or a case comes out too,
    which no reader here matches."""
    body = func.body
    if type(body) is list:
        for stmts in statement_lists(body):
            yield from stmts


def _none_tested(test) -> Optional[str]:
    """``G`` of a test ``G is None``."""
    found = none_test(test)
    return found[0] if found is not None and found[1] else None


def names_only_test(test) -> Optional[frozenset]:
    """The names ``test`` reads where it reads nothing but names and
    constants, through operators, comparisons and calls of
    :data:`TEST_BUILTINS` (``G is None and not hasattr(H, "x")``); None for
    any other test.  (A memo's path test: an attribute or an element of a
    global may change while the global is not rebound.)"""
    names = set()
    for node in walk(test):
        t = type(node)
        if t is ast.Name:
            names.add(node.id)
        elif t is ast.Call:
            if type(node.func) is not ast.Name or node.func.id not in TEST_BUILTINS:
                return None
        elif t in _NOT_NAMES_ONLY:
            return None
    return frozenset(names - TEST_BUILTINS)


def memo_fill_calls(func, declared) -> dict:
    """id(call) -> ``G`` for each ``G = call(...)`` directly in the body of
    ``if G is None:`` of a function declaring ``global G`` (``declared``:
    the names it declares so)."""
    fills = {}
    for stmt in _statements(func):
        if type(stmt) is not ast.If:
            continue
        name = _none_tested(stmt.test)
        if name is None or name not in declared:
            continue
        for inner in stmt.body:
            if type(inner) is ast.Assign and len(inner.targets) == 1 and type(inner.targets[0]) is ast.Name \
                    and inner.targets[0].id == name and type(inner.value) is ast.Call:
                fills[id(inner.value)] = name
    return fills


def global_stores(info) -> tuple:
    """``((module, name, line), ...)``: the module globals a function
    rebinds, its own (``global G`` then ``G = ...``) and those of imported
    modules (``mod.G = ...``), from what its scan noted
    (:meth:`~cslint.analysis.functionscan.FunctionScan.scan_calls`)."""
    imports = info.ctx.imports
    out = {(imports[name], attr, line) for name, attr, line in info.module_stores}
    if info.declared_globals:
        module, declared, targets = info.ctx.module, info.declared_globals, []
        for stmt in _statements(info.func):
            if type(stmt) in TARGET_STATEMENTS:
                targets.extend(statement_targets(stmt))
        while targets:
            target = targets.pop()
            t = type(target)
            if t is ast.Tuple or t is ast.List:
                targets.extend(target.elts)
            elif t is ast.Starred:
                targets.append(target.value)
            elif t is ast.Name and target.id in declared:
                out.add((module, target.id, target.lineno))
    return tuple(sorted(out)) if out else ()


def leading_calls(info) -> frozenset:
    """``(line, column)`` (1-based column, as :class:`~cslint.model.Span`) of
    the calls that are a whole statement of the function's body, or the
    value it assigns, before the first statement that can return (or yield,
    or await)."""
    return frozenset((call.lineno, call.col_offset + 1) for call in _leading_call_nodes(info))


def first_call_ref(info) -> tuple:
    """A summarised constructor: ``(reference,)`` of its first call, where
    that call is a whole statement of its body before anything can return
    and every statement before it is a simple one that calls nothing; else
    ().  (Its summary keeps no call sites by position.)"""
    leaves_at = info.leaves_at
    body = info.func.body
    for stmt in body if type(body) is list else ():
        if type(stmt) not in _SIMPLE or (leaves_at is not None and stmt.end_lineno >= leaves_at):
            return ()
        calls = [node for node in ast.walk(stmt) if type(node) is ast.Call]
        if not calls:
            continue
        value = stmt.value if type(stmt) in _CALL_STATEMENTS else None
        if type(value) is not ast.Call:
            return ()
        receiver = {id(node) for node in ast.walk(value.func)}  # ``super()`` of ``super().__init__(...)``
        if any(call is not value and id(call) not in receiver for call in calls):
            return ()
        ref = info.resolve_ref(value.func)
        return (ref,) if ref is not None else ()
    return ()


def _leading_call_nodes(info) -> list:
    out = []
    leaves_at = info.leaves_at
    body = info.func.body
    for stmt in body if type(body) is list else ():
        if leaves_at is not None and stmt.end_lineno >= leaves_at:
            break
        if stmt.__class__ in _CALL_STATEMENTS and stmt.value.__class__ is ast.Call:
            out.append(stmt.value)
    return out


#: the statements whose value may be a call that is all they do
_CALL_STATEMENTS = frozenset({ast.Expr, ast.Assign, ast.AnnAssign})
#: statements that run nothing but their own expressions
_SIMPLE = _CALL_STATEMENTS | {ast.AugAssign, ast.Pass, ast.Global, ast.Nonlocal, ast.Delete}
