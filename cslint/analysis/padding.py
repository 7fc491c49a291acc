"""A length padded up to the group's agreed maximum is that maximum.

The shape (``padded_edges``)::

    count = torch.tensor([x.shape[0]])          # or len(x), x.size(0)
    dist.all_reduce(count, op=ReduceOp.MAX, group=g)
    missing = int(count.item()) - x.shape[0]
    if missing > 0:
        x = torch.cat([x, filler])              # or x = x + [pad] * missing, x.extend(...)

``count`` is the largest of the lengths the members of ``g`` gave, so a rank
whose ``x`` was shorter pads it (the arm) and a rank whose ``x`` was not
already had that largest length: past the ``if``, on both ways in, ``x`` is as
long as ``int(count.item())`` and its own structure is what that expression
holds (agreed within ``g``, as the collective's result is), while its
contents still hold what they held.  The statements must follow one another
in one block, ``x`` must not be rebound between the count and the test, and
the arm must not leave the block, so the only ways into the statement past
the ``if`` are the test's false edge and the arm's end
(:class:`~cslint.analysis.edges.Refinements` applies the edges)."""

from __future__ import annotations

import ast
from typing import Optional

from . import cfg as cfgmod
from .atoms import WHOLE, project
from .bindings import assigned_names
from .syntax import dotted
from .vocabulary import MAX_REDUCTIONS

#: a value's structure dropped, its contents and what it holds kept
KEEP_CONTENTS = "-CH"
_LEAVING = (ast.Return, ast.Raise, ast.Break, ast.Continue)


def padded_edges(dataflow, buffers) -> dict:
    """{(node, successor): (name, agreed length expression)} for the edges into the statement past a padding
    ``if`` (see the module docstring); ``buffers(stmt)``: the local names a statement's collectives write in place."""
    graph, info = dataflow.graph, dataflow.info
    out = {}
    for node in graph.nodes:
        stmt = node.stmt
        if node.kind != cfgmod.TEST or type(stmt) is not ast.If or stmt.orelse:
            continue
        missing = _positive_test(stmt.test)
        if missing is None:
            continue
        found = _padding(stmt, missing, info.blocks.get(id(stmt)), buffers, info.func)
        if found is None:
            continue
        joins = [succ for succ, label in node.succs if label is False]
        if len(joins) != 1:
            continue
        join = joins[0]
        for p in graph.nodes[join].preds:
            if p == node.id or info.inside(graph.nodes[p].stmt, stmt):
                out[p, join] = found
    return out


def padded(data: tuple, out: dict, evaluator, fork) -> dict:
    """``out`` along an edge past a padding ``if``: the padded name's structure (and own structure, where kept
    apart) is the agreed length's value; its contents keep what they held."""
    name, agreed = data
    length = project(WHOLE, evaluator.eval(agreed, out))
    refined = fork(out)
    for key in (name, ("own", name)):
        atoms = out.get(key)
        if atoms is not None:
            refined[key] = project(KEEP_CONTENTS, atoms) | length
    return refined


def _positive_test(test) -> Optional[str]:
    """``m`` of ``if m > 0:`` / ``if m >= 1:``."""
    if type(test) is not ast.Compare or len(test.ops) != 1 or type(test.left) is not ast.Name:
        return None
    bound = test.comparators[0]
    if type(bound) is not ast.Constant or type(bound.value) is not int:
        return None
    op = type(test.ops[0])
    if (op is ast.Gt and bound.value == 0) or (op is ast.GtE and bound.value == 1):
        return test.left.id
    return None


def _size_of(expr) -> Optional[str]:
    """``x`` of ``len(x)``, ``x.shape[0]``, ``x.size(0)``."""
    t = type(expr)
    if t is ast.Call and not expr.keywords and len(expr.args) == 1:
        func, arg = expr.func, expr.args[0]
        if type(func) is ast.Name and func.id == "len" and type(arg) is ast.Name:
            return arg.id
        if type(func) is ast.Attribute and func.attr == "size" and type(func.value) is ast.Name \
                and type(arg) is ast.Constant and arg.value == 0:
            return func.value.id
    if t is ast.Subscript and type(expr.slice) is ast.Constant and expr.slice.value == 0:
        shape = expr.value
        if type(shape) is ast.Attribute and shape.attr == "shape" and type(shape.value) is ast.Name:
            return shape.value.id
    return None


def _stores(func, name: str) -> list:
    return [node for node in ast.walk(func) if type(node) is ast.Name and node.id == name
            and type(node.ctx) is ast.Store]


def _padding(stmt: ast.If, missing: str, block, buffers, func) -> Optional[tuple]:
    """(name, agreed length expression) where ``stmt`` pads a name to an agreed maximum; None otherwise."""
    if block is None:
        return None
    at = next(i for i, s in enumerate(block) if s is stmt)
    for i in range(at - 1, -1, -1):  # ``missing = agreed - size(x)``
        s = block[i]
        if missing in assigned_names(s):
            break
    else:
        return None
    value = s.value if type(s) is ast.Assign and len(s.targets) == 1 else None
    if type(value) is not ast.BinOp or type(value.op) is not ast.Sub:
        return None
    name = _size_of(value.right)
    agreed = value.left
    if name is None or not _pads(stmt.body, name, missing) or len(_stores(func, missing)) != 1:
        return None
    read = {n.id for n in ast.walk(agreed) if type(n) is ast.Name}
    later = [*block[i + 1:at], *stmt.body]
    if any(not read.isdisjoint(assigned_names(node)) for s in later for node in ast.walk(s)):
        return None  # (the agreed length is read again past the ``if``: what it read must be as it was)
    for count in sorted(read):
        if _counted_and_maxed(block[:i], count, name, buffers, func) and \
                not any(name in assigned_names(s) for s in _after_count(block[:at], count)):
            return name, agreed
    return None


def _after_count(block: list, count: str) -> list:
    """The statements of ``block`` after the one that binds ``count``."""
    for i, s in enumerate(block):
        if count in assigned_names(s):
            return block[i + 1:]
    return []


def _counted_and_maxed(block: list, count: str, name: str, buffers, func) -> bool:
    """Whether ``count``, bound once in ``block`` to a value reading ``name``'s size, is then reduced in place
    with a maximum by a collective of a later statement of ``block``."""
    if len(_stores(func, count)) != 1:
        return False
    for i, s in enumerate(block):
        if count in assigned_names(s):
            if type(s) is not ast.Assign or not any(_size_of(n) == name for n in ast.walk(s.value)):
                return False
            return any(count in buffers(later) and _reduces_max(later) for later in block[i + 1:])
    return False


def _reduces_max(stmt) -> bool:
    for node in ast.walk(stmt):
        if type(node) is ast.Call:
            for arg in [*node.args, *(kw.value for kw in node.keywords)]:
                text = dotted(arg)
                if text and text.rsplit(".", 1)[-1] in MAX_REDUCTIONS:
                    return True
    return False


def _pads(body: list, name: str, missing: str) -> bool:
    """Whether the arm rebinds or extends ``name``, reads ``missing``, and never leaves."""
    grows = reads = False
    for s in body:
        for node in ast.walk(s):
            t = type(node)
            if t in _LEAVING:
                return False
            if t is ast.Name and node.id == missing:
                reads = True
            if t is ast.Call and type(node.func) is ast.Attribute and node.func.attr == "extend" \
                    and type(node.func.value) is ast.Name and node.func.value.id == name:
                grows = True
        if name in assigned_names(s):
            grows = True
    return grows and reads
