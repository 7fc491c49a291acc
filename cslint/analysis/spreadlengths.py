"""How many elements a sequence spread into a call holds, where the syntax
writes it out (:func:`written_length`).

``f(*mine, attend, groups)`` binds ``attend`` and ``groups`` at places that
depend on how many elements ``mine`` holds.  Where that number is not known,
any parameter from the spread's place on may take any of its elements
(``spreads.py``), so a rank's own pieces reach the agreed count written after
them.  Where the syntax writes the number out, it is the same on every rank
whatever each rank's elements are, and the arguments after the spread land at
their own places::

    full = [make(n) for _ in range(3)]
    mine = [t[rank * n:(rank + 1) * n] for t in full]   # three, on every rank
    out = attend(*mine, attend_rows, groups)            # groups is the 5th

A sequence's length is written out by a list or tuple display with no spread
of its own, a comprehension or generator with one ``for`` and no filter over
such a sequence or over ``range`` of integer constants (at most
:data:`_MOST_ELEMENTS` elements), or a local name whose one *reaching
binding* is a plain assignment of one of those (a fresh sequence, never
another name: ``b = a`` holds the list ``a`` holds, which a statement
mentioning ``a`` alone may change).  The binding
reaching a mention is found from the statements alone: going back from the
statement holding the mention through the statements before it in its block,
then those before the block's own statement, the first statement mentioning
the name must be that assignment (:func:`reaching_assignment`).  Nothing
between the two mentions the name, so nothing can have added an element; the
search stops at a loop holding the mention (a later pass through the loop
holds what its body bound last), at a handler, ``else`` or ``finally`` of a
``try`` (entered from anywhere in its body), at a ``match`` and at the top of
the function (a parameter, a global).  A name a nested function, lambda or
class of the function mentions is never followed (a call of it could change
the list), nor one it declares ``global`` or ``nonlocal``.  In the statement
holding the mention, the name may be mentioned besides only where no element
can be added before the mention is read: spread, indexed, measured with
``len``, or an element of a display handed to a call that encloses the
mention (``issued.append((mine, attend(*mine, ...)))``: the display is
handed on only after the spread was read).
"""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import BLOCKS_OF, CHILDREN, DEFINITIONS, scoped_walk, walk

#: how many bindings of names :func:`written_length` follows, one through another
_LENGTH_DEPTH = 3
#: the longest sequence laid out argument by argument; a longer one binds as one of unknown length
_MOST_ELEMENTS = 64

_DISPLAYS = (ast.List, ast.Tuple, ast.Set)
#: blocks a name's binding before them reaches through: a branch, a ``with`` and a ``try`` body
STRAIGHT_BLOCKS = {ast.If: ("body", "orelse"), ast.With: ("body",), ast.AsyncWith: ("body",), ast.Try: ("body",)}
_TRY_STAR = getattr(ast, "TryStar", None)
if _TRY_STAR is not None:
    STRAIGHT_BLOCKS[_TRY_STAR] = ("body",)


def written_length(expr: ast.expr, info, statement: ast.stmt, is_builtin, depth: int = 0) -> Optional[int]:
    """How many elements the sequence ``expr``, read in ``statement`` of
    ``info``'s function, holds, the same on every rank because the syntax
    writes it out (see the module's doc); None where it does not."""
    t = type(expr)
    if t is ast.List or t is ast.Tuple:
        count = len(expr.elts)
        return None if count > _MOST_ELEMENTS or any(type(e) is ast.Starred for e in expr.elts) else count
    if depth >= _LENGTH_DEPTH:
        return None
    if t is ast.ListComp or t is ast.GeneratorExp:
        generators = expr.generators
        if len(generators) != 1 or generators[0].ifs or generators[0].is_async:
            return None
        return written_length(generators[0].iter, info, statement, is_builtin, depth)
    if t is ast.Call:
        return _range_length(expr, is_builtin)
    if t is ast.Name:
        binding = reaching_assignment(expr, info, statement)
        if binding is None or type(binding.value) is ast.Name:
            return None  # (``b = a``: what mentions ``a`` alone may still change the one list both hold)
        return written_length(binding.value, info, binding, is_builtin, depth + 1)
    return None


def _range_length(call: ast.Call, is_builtin) -> Optional[int]:
    """``len(range(...))`` of a call of the builtin ``range`` with integer constants alone, else None."""
    if type(call.func) is not ast.Name or call.func.id != "range" or call.keywords or not 1 <= len(call.args) <= 3:
        return None
    bounds = []
    for arg in call.args:
        sign = 1
        if type(arg) is ast.UnaryOp and type(arg.op) is ast.USub:
            arg, sign = arg.operand, -1
        if type(arg) is not ast.Constant or type(arg.value) is not int:
            return None
        bounds.append(sign * arg.value)
    if len(bounds) == 3 and bounds[2] == 0 or not is_builtin("range"):
        return None
    count = len(range(*bounds))
    return count if count <= _MOST_ELEMENTS else None


def reaching_assignment(mention: ast.Name, info, statement: ast.stmt):
    """The plain assignment ``name = value`` (or ``name: T = value``) that
    is the one binding of ``mention``'s name reaching ``statement`` (which
    holds ``mention``), with nothing between them that mentions the name and
    nothing in ``statement`` that could add an element before ``mention`` is
    read; None where that is not what the statements show (see the module's
    doc)."""
    name = mention.id
    func = info.func
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or info.blocks.get(id(statement)) is None:
        return None
    if not _only_read_in_place(statement, mention):
        return None
    for is_header, before in straight_line_before(info, statement):
        if not _mentions(before, name):
            continue
        if not is_header and assigns_name(before, name) and not _closed_over(func, name):
            return before
        return None
    return None  # (a parameter, a global or nothing yet; or a block that does not run straight)


def straight_line_before(info, statement: ast.stmt):
    """What runs before ``statement`` on every way to it, nearest first:
    yields ``(False, stmt)`` for each earlier statement of its block, then
    ``(True, part)`` for each header part of the compound statement holding
    that block (:func:`headers_of`), and so on outward while the block is one
    that runs straight into the next statement (:data:`STRAIGHT_BLOCKS`); it
    stops at the function's body or at a loop, a handler, a ``try``'s
    ``else`` or ``finally`` or a ``match``, where other ways in join."""
    parents, blocks = info.parents, info.blocks
    node = statement
    while True:
        block = blocks[id(node)]
        place = next(i for i, stmt in enumerate(block) if stmt is node)
        for before in reversed(block[:place]):
            yield False, before
        holder = parents[id(node)]
        if holder is None:
            return
        if not any(getattr(holder, field, None) is block for field in STRAIGHT_BLOCKS.get(type(holder), ())):
            return
        for header in headers_of(holder):
            yield True, header
        node = holder


def assigns_name(stmt: ast.stmt, name: str) -> bool:
    """``name = value`` or ``name: T = value``, one plain target."""
    t = type(stmt)
    if t is ast.Assign:
        return len(stmt.targets) == 1 and type(stmt.targets[0]) is ast.Name and stmt.targets[0].id == name
    return t is ast.AnnAssign and stmt.value is not None and type(stmt.target) is ast.Name \
        and stmt.target.id == name


def headers_of(holder: ast.stmt) -> list:
    """What a compound statement of :data:`STRAIGHT_BLOCKS` evaluates before its block."""
    t = type(holder)
    if t is ast.If:
        return [holder.test]
    if t is ast.With or t is ast.AsyncWith:
        return list(holder.items)
    return []


def _mentions(node: ast.AST, name: str) -> bool:
    """Whether ``name`` appears in ``node`` as a name (nested definitions
    included) or is declared there ``global`` or ``nonlocal``."""
    for inner in walk(node):
        t = type(inner)
        if t is ast.Name:
            if inner.id == name:
                return True
        elif t is ast.Global or t is ast.Nonlocal:
            if name in inner.names:
                return True
    return False


def _closed_over(func: ast.AST, name: str) -> bool:
    """Whether a nested function, lambda or class of ``func`` mentions
    ``func``'s own ``name``, or ``func`` declares it ``global`` or
    ``nonlocal``: a call, or a write elsewhere, could then change it."""
    own = 0
    body = func.body
    stack = list(body) if type(body) is list else [body]
    table, definitions = CHILDREN, DEFINITIONS
    while stack:  # (own_nodes' walk written out: no generator resumed per node)
        node = stack.pop()
        t = type(node)
        if t in definitions:
            continue
        read = table[t]
        if read is not None:
            stack += read(node)
        if t is ast.Name:
            own += node.id == name
        elif (t is ast.Global or t is ast.Nonlocal) and name in node.names:
            return True
    visible = frozenset((name,))
    seen = 0
    for node, names in scoped_walk(func, visible):
        if type(node) is ast.Name and node.id == name and names:
            seen += 1
            if seen > own:
                return True
    return False


def _only_read_in_place(statement: ast.stmt, mention: ast.Name) -> bool:
    """Whether every other mention of ``mention``'s name in ``statement``
    reads the sequence without handing it to anything that could add an
    element before ``mention`` is read: spread, indexed, measured with
    ``len``, or an element of a display (through displays) that a call
    enclosing ``mention`` takes as an argument."""
    name = mention.id
    parent: dict = {}
    found = []
    for node in walk(statement):
        read = CHILDREN[type(node)]
        if read is not None:
            for child in read(node):
                parent[id(child)] = node
        if type(node) is ast.Name and node.id == name and node is not mention:
            found.append(node)
        elif type(node) in (ast.Global, ast.Nonlocal) and name in node.names:
            return False
    if not found:
        return True
    enclosing = set()
    node = parent.get(id(mention))
    while node is not None:
        enclosing.add(id(node))
        node = parent.get(id(node))
    for other in found:
        if type(other.ctx) is not ast.Load:
            return False
        holder = parent.get(id(other))
        t = type(holder)
        if t is ast.Starred or t is ast.Subscript and holder.value is other and type(holder.ctx) is ast.Load:
            continue
        if t is ast.Call and type(holder.func) is ast.Name and holder.func.id == "len" and holder.args == [other]:
            continue
        while t in _DISPLAYS or t is ast.keyword:
            holder = parent.get(id(holder))
            t = type(holder)
        if t is ast.Call and id(holder) in enclosing and holder.func is not other:
            continue
        return False
    return True


def statement_holding(info, node: ast.AST) -> Optional[ast.stmt]:
    """The innermost statement of ``info``'s function (nested definitions
    left out) whose text holds ``node``, found by position; None where none
    does."""
    at = (node.lineno, node.col_offset)
    block = info.body
    found = None
    while block:
        for stmt in block:
            if (stmt.lineno, stmt.col_offset) <= at < (stmt.end_lineno, stmt.end_col_offset):
                break
        else:
            return found
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return None
        found = stmt
        block = [inner for field in BLOCKS_OF[type(stmt)] for inner in _statements_of(getattr(stmt, field, None))]
    return found


def _statements_of(block) -> list:
    """The statements of a block, those of a ``try``'s handlers and a ``match``'s cases taken out of them."""
    out = []
    for inner in block or ():
        if isinstance(inner, ast.stmt):
            out.append(inner)
        else:  # (a handler or a case)
            out.extend(inner.body)
    return out
