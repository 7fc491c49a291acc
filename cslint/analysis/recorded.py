"""Failures a function records in a name instead of raising them.

A function that must reach a collective on every rank often catches its
own local failure and keeps it::

    try:
        ctx = await self._prepare(items)      # -> Context
    except Exception as error:
        failure = error
    ...
    if failure is None:
        assert ctx is not None
        ...

Every handler of that ``try`` binds ``failure`` to the exception it caught,
which is never None, and nothing between the ``try`` and the test binds
``failure`` to anything else.  Where ``failure is None`` holds, no handler
of the ``try`` ran: its body ran to its end, so ``ctx`` holds what the body
bound it to.  When that is never None (a class of the module built, or a
call of a function of the module whose return annotation names one class:
``receivers.declares_one_object``), ``assert ctx is not None`` holds
wherever it is reached and raises on no rank
(:func:`assert_holds_where_reached`, read where the summary walk and the
graph walk add an assert to what decides that a function raises).

An assert whose test may fail still counts, wherever it stands: on the None
edge of such a name it is reached only by the ranks whose ``try`` did not
fail, which is what parts them.
"""

from __future__ import annotations

import ast

from .astwalk import iter_children, walk as fast_walk, walked
from .bindings import target_names
from .receivers import declares_one_object, other_bindings
from .presence import none_test


def assert_holds_where_reached(info, stmt) -> bool:
    """Whether ``stmt`` is ``assert name is not None`` on the None edge of a
    test of a failure record (``if failure is None:``, or the ``else`` of
    ``if failure is not None:``), where ``name`` holds the never-None value
    the body of the recorded ``try`` bound it to (module docstring)."""
    if type(stmt) is not ast.Assert:
        return False
    name = _tested_not_none(stmt.test)
    if name is None or info.binds_in_expressions():
        return False
    child, parent = stmt, info.parents.get(id(stmt))
    while parent is not None and parent is not info.func:
        if type(parent) is ast.If:
            record = _none_edge_of(parent, child)
            if record is not None and _unbound_before(name, stmt, parent) \
                    and _recorded_try_binds(info, parent, record, name):
                return True
        child, parent = parent, info.parents.get(id(parent))
    return False


def _tested_not_none(test):
    """``x`` of ``x is not None``, else None."""
    tested = none_test(test)
    return tested[0] if tested is not None and not tested[1] else None


def _none_edge_of(test_stmt: ast.If, child):
    """The name ``test_stmt`` tests against None when ``child`` sits on the
    edge where it is None (``if r is None:`` body, ``if r is not None:``
    else), else None."""
    tested = none_test(test_stmt.test)
    if tested is None:
        return None
    inside = test_stmt.body if tested[1] else test_stmt.orelse
    return tested[0] if any(child is stmt for stmt in inside) else None


def _unbound_before(name: str, stmt, test_stmt: ast.If) -> bool:
    """Whether nothing in the tested statement binds ``name`` (read from
    both its branches, wherever the binding stands: a binding after the
    assert, or in a loop around it, could run before it)."""
    return not any(_binds(node, name) for part in test_stmt.body + test_stmt.orelse
                   for node in fast_walk(part) if node is not stmt)


def _recorded_try_binds(info, test_stmt: ast.If, record: str, name: str) -> bool:
    """Whether an earlier statement of the block holding ``test_stmt`` is a
    ``try`` every handler of which records its failure in ``record``, whose
    body binds ``name`` once, at its top, to a never-None value, and after
    which nothing up to the test binds ``record`` but other handlers'
    records nor ``name`` at all."""
    block = info.blocks.get(id(test_stmt))
    if block is None:
        return False
    index = next((i for i, stmt in enumerate(block) if stmt is test_stmt), None)
    if index is None or _declared_outside(info, (record, name)):
        return False
    for back in range(index - 1, -1, -1):
        stmt = block[back]
        if type(stmt) is ast.Try and _records_failure(stmt, record) and _binds_never_none(info, stmt, name):
            return _only_records_between(block[back + 1:index], record, name)
    return False


def _records_failure(try_stmt: ast.Try, record: str) -> bool:
    """Every handler of ``try_stmt`` names what it caught and binds
    ``record`` to it at its top level, with no ``break``/``continue`` that
    could leave before, and binds ``record`` no other way; its ``else`` and
    ``finally`` do not bind ``record``."""
    if not try_stmt.handlers:
        return False
    for handler in try_stmt.handlers:
        caught = handler.name
        if not caught or not any(_records(stmt, record, caught) for stmt in handler.body):
            return False
        for part in handler.body:
            for node in fast_walk(part):
                if type(node) in (ast.Break, ast.Continue):
                    return False
                if _binds(node, record) and not _records(node, record, caught):
                    return False
    return not any(_binds(node, record) for part in try_stmt.orelse + try_stmt.finalbody for node in fast_walk(part))


def keeps_caught(handler: ast.ExceptHandler) -> bool:
    """Whether ``handler`` binds a name to what it caught at its top level
    (``failure = error``, or a message made from it, ``failure = f"{error}"``):
    the failure record this module reads."""
    return bool(handler.name) and any(type(stmt) is ast.Assign and len(stmt.targets) == 1
                                      and type(stmt.targets[0]) is ast.Name
                                      and _records(stmt, stmt.targets[0].id, handler.name) for stmt in handler.body)


def _records(stmt, record: str, caught: str) -> bool:
    """``record = caught``, or a message made from it (``f"{type(caught).__name__}:
    {caught}"``, ``str(caught)``, ``repr(caught)``): never None either."""
    if not (type(stmt) is ast.Assign and len(stmt.targets) == 1 and type(stmt.targets[0]) is ast.Name
            and stmt.targets[0].id == record):
        return False
    value = stmt.value
    if type(value) is ast.Name:
        return value.id == caught
    if type(value) is ast.JoinedStr:
        return any(type(node) is ast.Name and node.id == caught for node in fast_walk(value))
    return type(value) is ast.Call and type(value.func) is ast.Name and value.func.id in ("str", "repr") \
        and len(value.args) == 1 and not value.keywords and type(value.args[0]) is ast.Name \
        and value.args[0].id == caught


def _binds_never_none(info, try_stmt: ast.Try, name: str) -> bool:
    """The ``try``'s body binds ``name`` exactly once, by a top-level
    assignment of a value that is never None; its handlers, ``else`` and
    ``finally`` do not bind it."""
    bindings = [node for part in try_stmt.body for node in walked(part) if _binds(node, name)]
    if len(bindings) != 1 or not any(bindings[0] is stmt for stmt in try_stmt.body):
        return False
    value = _assigned_value(bindings[0], name)
    if value is None or not _never_none(info, value):
        return False
    rest = [node for handler in try_stmt.handlers for part in handler.body for node in walked(part)]
    rest += [node for part in try_stmt.orelse + try_stmt.finalbody for node in walked(part)]
    return not any(_binds(node, name) for node in rest)


def _assigned_value(stmt, name: str):
    if type(stmt) is ast.Assign and len(stmt.targets) == 1 and type(stmt.targets[0]) is ast.Name \
            and stmt.targets[0].id == name:
        return stmt.value
    if type(stmt) is ast.AnnAssign and type(stmt.target) is ast.Name and stmt.target.id == name:
        return stmt.value
    return None


def _never_none(info, value) -> bool:
    """A value that is never None: an object of a class of the module made
    (``Context(...)``), or what a function or method of the module that
    declares one class as its return hands back (``await self._prepare(x)``
    of an ``async def``, ``self._build(x)`` of a plain one)."""
    awaited = type(value) is ast.Await
    call = value.value if awaited else value
    if type(call) is not ast.Call:
        return False
    func = call.func
    if type(func) is ast.Name and func.id in info.ctx.module_classes and func.id not in info.local_names \
            and not awaited:
        return True
    ref = info.resolve_ref(func)
    if ref is None:
        return False
    definition = _definition(info.ctx, ref)
    return definition is not None and (type(definition) is ast.AsyncFunctionDef) == awaited \
        and declares_one_object(definition, info.ctx)


def _definition(ctx, ref):
    """The definition of a function or method of ``ctx``'s module that
    ``ref`` names, else None."""
    tag = ref.tag
    if tag == "func":
        return ctx.definitions().get(ref.qualname) if ref.module == ctx.module else None
    if tag == "method":
        module, _, cls = ref.class_key.partition(":")
        return ctx.definitions().get(f"{cls}.{ref.name}") if module == ctx.module else None
    return None


def _only_records_between(stmts, record: str, name: str) -> bool:
    """Whether ``stmts`` (those between the ``try`` and the test) bind
    ``name`` nowhere and ``record`` only as a handler's record of what it
    caught (``except E as error: record = error``), which is never None."""
    stack = [(stmt, None) for stmt in stmts]
    while stack:
        node, caught = stack.pop()
        if _binds(node, name):
            return False
        if type(node) is ast.ExceptHandler:
            if node.name == record:
                return False  # ``except E as record``: bound, then deleted
            caught = node.name
        elif _binds(node, record) and not (caught and _records(node, record, caught)):
            return False
        stack.extend((child, caught) for child in iter_children(node))
    return True


def _binds(node, name: str) -> bool:
    """Whether a statement binds ``name`` itself (nested statements are
    walked separately)."""
    kind = type(node)
    if kind is ast.Assign:
        return any(name == bound for target in node.targets for bound in target_names(target))
    if kind is ast.AnnAssign:
        return node.value is not None and name in target_names(node.target)
    if kind is ast.NamedExpr:
        return type(node.target) is ast.Name and node.target.id == name
    if isinstance(node, ast.stmt) or kind is ast.ExceptHandler:
        return name in other_bindings(node)
    return False


def _declared_outside(info, names) -> bool:
    """Whether the function declares one of ``names`` global or nonlocal,
    or a function nested in it declares it nonlocal: a call could then
    rebind it between two statements."""
    for node in fast_walk(info.func):
        if type(node) in (ast.Global, ast.Nonlocal) and any(name in node.names for name in names):
            return True
    return False
