"""Which binding of a local name reaches a read of it, as far as whether the
name is None goes (``noneness.py``).

Whether a name is None is decided by the binding that reaches the read, and
changed only by a binding: reads of the name, calls handed it and stores
into it change what the object holds, never which object it is.  Going
back from the statement holding the read, as
:func:`~cslint.analysis.spreadlengths.reaching_assignment` does (through
the statements before it in its block, then those before the block's own
statement, out of the arms of an ``if``, a ``with`` and a ``try`` body,
never out of a loop, a handler, a ``try``'s ``else`` or ``finally`` or a
``match``), :func:`binding_reaching` finds the plain assignment ``name =
value`` (or ``name: T = value``) where that is the first statement on the
way that binds the name in any way (an assignment, an unpacking, a loop or
``with`` target, a walrus, ``del``, an import, a definition, a handler's or
a pattern's name, ``global``/``nonlocal``): the one binding reaching the
read, where the name has other bindings elsewhere in the function
(``out = helper(x)`` tested at once, ``out, extra = result`` on another
path).  It asks less of what lies between than ``reaching_assignment``,
whose question (how many elements a list holds) a call handed the list
changes: here only a binding does.

In the statement holding the read nothing read before it may bind the name
(a simple statement's value, a compound statement's header); a loop's body
reaches its header again, and a ``try``'s handlers and a ``match``'s
guards are read after blocks that may bind it: neither is followed.  A
name the function declares ``global``, or a function nested in it
``nonlocal``, is never followed (a call could rebind it); a nested scope
that only reads it cannot.
"""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import BLOCKS_OF, LOOPS, imported_names, walked
from .spreadlengths import assigns_name, statement_holding, straight_line_before

_TRY_STAR = getattr(ast, "TryStar", None)
#: statements holding a read in a part evaluated after a block that may bind the name (handlers, case guards)
_NOT_FOLLOWED = frozenset(filter(None, (ast.Try, _TRY_STAR, ast.Match)))
#: nodes that bind the name they carry in ``name``
_NAMED_BINDINGS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler,
                             ast.MatchAs, ast.MatchStar})



def binding_reaching(info, mention: ast.Name) -> Optional[ast.stmt]:
    """The plain assignment that is the one binding of the local name read
    by ``mention`` reaching it (see the module's doc), or None; once per
    read."""
    known = info.__dict__.get("_binding_reaching")
    if known is None:
        known = info.__dict__["_binding_reaching"] = {}
    found = known.get(id(mention))
    if found is None or found[0] is not mention:
        found = known[id(mention)] = (mention, _binding_reaching(info, mention))
    return found[1]


def _binding_reaching(info, mention: ast.Name) -> Optional[ast.stmt]:
    name = mention.id
    if name in declared_shared(info):
        return None  # (``global`` here, or a nested function's ``nonlocal``: rebound elsewhere)
    statement = statement_holding(info, mention)
    if statement is None or info.blocks.get(id(statement)) is None:
        return None
    t = type(statement)
    if t in _NOT_FOLLOWED or (t in LOOPS and name in bound_in(info, statement)):
        return None
    if t is ast.Assign or t is ast.AnnAssign or t is ast.AugAssign:
        read_first = [statement.value] if statement.value is not None else []
    else:
        read_first = _header_parts(statement)
    if any(name in bound_names(part) for part in read_first):
        return None
    for is_header, before in straight_line_before(info, statement):
        if is_header:
            if name in bound_names(before):
                return None
        elif name in bound_in(info, before):
            return before if assigns_name(before, name) else None
    return None  # (a parameter, a global or nothing yet; or a block that does not run straight)


def _header_parts(statement: ast.stmt) -> list:
    """The parts of ``statement`` outside its blocks (a simple statement: all of it)."""
    blocks = BLOCKS_OF[type(statement)]
    out = []
    for field in statement._fields:
        if field in blocks:
            continue
        value = getattr(statement, field, None)
        if isinstance(value, ast.AST):
            out.append(value)
        elif type(value) is list:
            out.extend(v for v in value if isinstance(v, ast.AST))
    return out


def declared_shared(info) -> frozenset:
    """The names ``info``'s function, or a function nested in it, declares
    ``global`` or ``nonlocal``; once per function.  Its own declarations and
    its nested definitions come from the call scan's walk
    (:meth:`~cslint.analysis.functionscan.FunctionScan.scan_calls`): only the
    nested definitions are walked here."""
    found = info.__dict__.get("_declared_shared")
    if found is None:
        info.ensure_scanned()
        names = set(info.declared_shared)
        for definition in info.nested_definitions:
            for node in walked(definition):
                t = type(node)
                if t is ast.Global or t is ast.Nonlocal:
                    names.update(node.names)
        found = info.__dict__["_declared_shared"] = frozenset(names)
    return found


def bound_in(info, stmt: ast.stmt) -> frozenset:
    """:func:`bound_names` of ``stmt`` of the function ``info``, worked out once per statement."""
    known = info.__dict__.get("_bound_in")
    if known is None:
        known = info.__dict__["_bound_in"] = {}
    found = known.get(id(stmt))
    if found is None or found[0] is not stmt:
        found = known[id(stmt)] = (stmt, bound_names(stmt))
    return found[1]


def bound_names(node: ast.AST) -> frozenset:
    """The names ``node`` (nested definitions included) binds in any way,
    or declares ``global`` or ``nonlocal``."""
    found = set()
    for inner in walked(node):
        t = type(inner)
        if t is ast.Name:
            if type(inner.ctx) is not ast.Load:
                found.add(inner.id)
        elif t in _NAMED_BINDINGS:
            if inner.name:
                found.add(inner.name)
        elif t is ast.Import or t is ast.ImportFrom:
            found.update(imported_names(inner))
        elif t is ast.Global or t is ast.Nonlocal:
            found.update(inner.names)
        elif t is ast.MatchMapping:
            if inner.rest:
                found.add(inner.rest)
    return frozenset(found)
