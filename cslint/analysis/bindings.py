"""What the syntax binds: the names an assignment target writes, a target
paired with its value, the values a local name is bound to, what a
function stores into the entries of a container in place, and a
function's parameters (those that may be None too)."""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import BLOCKS_OF, defaulted_parameters, imported_names, own_nodes, param_names, parameters, walked


def assigned_names(node: ast.AST) -> list:
    names = []
    if isinstance(node, ast.Assign):
        for target in node.targets:
            names.extend(target_names(target))
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        names.extend(target_names(node.target))
    return names


def target_names(target: ast.AST) -> list:
    t = type(target)  # (the parser makes no subclasses of node types)
    if t is ast.Name:
        return [target.id]
    if t is ast.Tuple or t is ast.List:
        out = []
        for elt in target.elts:
            out.extend(target_names(elt))
        return out
    if t is ast.Starred:
        return target_names(target.value)
    return []


def local_values(func, name: str) -> Optional[list]:
    """The values every binding of the local ``name`` in ``func`` assigns
    (its own body, nested definitions aside; ``name = value`` with one target
    and ``name: T = value``), or None where ``name`` is a parameter or some
    binding is of another form (a tuple or chained target, a loop, ``with``,
    augmented or annotated-only assignment, an import, ``global``/``nonlocal``,
    an ``except`` name, a definition, a ``:=``)."""
    assignments = local_assignments(func, name)
    return None if assignments is None else [value for _statement, value in assignments]


def local_assignments(func, name: str, unpacked: bool = False) -> Optional[list]:
    """:func:`local_values` with the statement of each: ``[(assignment, value), ...]``; with ``unpacked``, an
    unpacking that names it (``g, h = (a, b) if r else (b, a)``) gives the whole value it unpacks, which holds
    the one it binds among others (else None: the value is no element of it)."""
    args = getattr(func, "args", None)
    if args is None or name in param_names(func):
        return None
    values = []
    stack = list(func.body)
    while stack:
        node = stack.pop()
        t = type(node)
        if t is ast.FunctionDef or t is ast.AsyncFunctionDef or t is ast.ClassDef:
            if node.name == name:
                return None
            continue
        if t is ast.Assign:
            for target in node.targets:
                if type(target) is ast.Name and target.id == name and len(node.targets) == 1:
                    values.append((node, node.value))
                elif name in target_names(target):
                    if not unpacked or type(target) is ast.Name:
                        return None
                    values.append((node, node.value))
        elif t is ast.AnnAssign:
            if type(node.target) is ast.Name and node.target.id == name:
                if node.value is None:
                    return None
                values.append((node, node.value))
        elif t is ast.AugAssign or t is ast.For or t is ast.AsyncFor:
            if name in target_names(node.target):
                return None
        elif t is ast.With or t is ast.AsyncWith:
            if any(item.optional_vars is not None and name in target_names(item.optional_vars) for item in node.items):
                return None
        elif t is ast.Import or t is ast.ImportFrom:
            if name in imported_names(node):
                return None
        elif t is ast.Global or t is ast.Nonlocal:
            if name in node.names:
                return None
        elif t is ast.Try or t is getattr(ast, "TryStar", None):
            if any(handler.name == name for handler in node.handlers):
                return None
        stack.extend(child for field in BLOCKS_OF[t] for child in getattr(node, field))
    # (a ``:=`` is rare: one walk of the function, asked last, as a list: no generator resumed per node)
    if values:
        for node in walked(func):
            if type(node) is ast.NamedExpr and node.target.id == name:
                return None
    return values


#: the statements that bind (or delete) targets: an assignment, a loop, a ``with``, a ``del``
TARGET_STATEMENTS = frozenset({ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.With,
                               ast.AsyncWith, ast.Delete})


def statement_targets(stmt: ast.stmt) -> list:
    """The targets a statement of :data:`TARGET_STATEMENTS` binds or
    deletes: an assignment's (each ``=`` of a chain), a loop's, the ``as``
    part of each item of a ``with``, each of a ``del``."""
    t = type(stmt)
    if t is ast.Assign or t is ast.Delete:
        return list(stmt.targets)
    if t is ast.AugAssign or t is ast.AnnAssign or t is ast.For or t is ast.AsyncFor:
        return [stmt.target]
    return [item.optional_vars for item in stmt.items if item.optional_vars is not None]


def flatten_targets(target):
    t = type(target)
    if t is ast.Tuple or t is ast.List:
        for elt in target.elts:
            yield from flatten_targets(elt)
    elif t is ast.Starred:
        yield from flatten_targets(target.value)
    else:
        yield target


def pairwise(targets, value):
    """``a, b = x, y`` -> [(a, x), (b, y)]; None for anything else."""
    if len(targets) != 1 or not isinstance(value, (ast.Tuple, ast.List)):
        return None
    target = targets[0]
    if not isinstance(target, (ast.Tuple, ast.List)) or len(target.elts) != len(value.elts):
        return None
    if any(isinstance(e, ast.Starred) for e in list(target.elts) + list(value.elts)):
        return None
    return list(zip(target.elts, value.elts))


def _admits_none(annotation) -> bool:
    """``Optional[int]``, ``int | None``, ``"Optional[int]"``: an annotation
    that lets the value be None."""
    if annotation is None:
        return False
    if type(annotation) is ast.Constant:
        if annotation.value is None:
            return True
        if type(annotation.value) is not str:
            return False
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return False
    if type(annotation) is ast.BinOp and type(annotation.op) is ast.BitOr:
        return _admits_none(annotation.left) or _admits_none(annotation.right)
    if type(annotation) is ast.Subscript:
        base = annotation.value
        name = base.attr if type(base) is ast.Attribute else base.id if type(base) is ast.Name else None
        if name == "Optional":
            return True
        if name == "Union":
            members = annotation.slice.elts if type(annotation.slice) is ast.Tuple else [annotation.slice]
            return any(_admits_none(member) for member in members)
    return False


def params_that_may_be_none(func) -> frozenset:
    """The parameters of a function that default to None or whose
    annotation admits None."""
    args = getattr(func, "args", None)
    if args is None:
        return frozenset()
    out = {arg.arg for arg in parameters(args, starred=False) if _admits_none(arg.annotation)}
    for arg, default in defaulted_parameters(args):
        if isinstance(default, ast.Constant) and default.value is None:
            out.add(arg.arg)
    return frozenset(out)


#: the calls on a table that store entries into it in place (their arguments the values stored)
_ENTRY_STORING_CALLS = frozenset({"update", "setdefault", "__setitem__"})


def element_stores(func, name: str) -> list:
    """What changes an entry of the container ``name`` in place in ``func``'s
    own body (nested definitions aside), as ``(node, keys, values)``: an
    assignment ``name[k] = v`` (or ``name[k][j] = v``, ``name[k]: T = v``,
    ``name[k], x = ...``) with its keys and its whole value, or a call
    ``name.update(...)`` / ``name[k].setdefault(...)`` with its keys and each
    argument it is handed.  ``node`` is the assignment statement or the call."""
    found = []
    for node in own_nodes(func):
        t = type(node)
        if t is ast.Assign or t is ast.AnnAssign:
            if node.value is None:
                continue
            for target in statement_targets(node):
                for part in flatten_targets(target):
                    keys = _keys_into(part, name)
                    if keys:
                        found.append((node, keys, [node.value]))
        elif t is ast.Call and type(node.func) is ast.Attribute and node.func.attr in _ENTRY_STORING_CALLS:
            container = node.func.value
            keys = [] if type(container) is ast.Name and container.id == name else _keys_into(container, name)
            if keys is not None:
                found.append((node, keys, [*node.args, *(keyword.value for keyword in node.keywords)]))
    return found


def _keys_into(target, name: str) -> Optional[list]:
    """The keys, outermost last, of a subscript ``name[k]...[j]``, else None."""
    keys = []
    while type(target) is ast.Subscript:
        keys.append(target.slice)
        target = target.value
    return keys[::-1] if keys and type(target) is ast.Name and target.id == name else None
