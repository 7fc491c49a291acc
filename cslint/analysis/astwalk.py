"""Fast AST traversal.

``ast.walk`` goes through two nested generators per node and visits every
field, including the shared ``Load``/``Store`` context objects, operator
singletons and plain strings.  The analysis walks each function several
times, so on large trees that overhead was the largest single cost after
parsing.  ``walk`` here yields the same nodes in the same (breadth-first)
order, minus context and operator nodes, which no analysis looks at as
nodes (their information is read through the parent's attribute).
"""

from __future__ import annotations

import ast
from collections import deque

# Fields that never hold a node worth visiting, whatever the node type.
_SKIPPED_FIELDS = frozenset({
    "ctx", "op", "ops", "id", "attr", "arg", "module", "asname", "type_comment", "kind", "tag",
    "rest", "conversion", "level", "is_async", "kwd_attrs", "lineno", "col_offset",
    "end_lineno", "end_col_offset", "name",  # ``name`` is a plain string on every node type
})
# Node types whose fields hold no nodes at all (or only nodes nobody visits).
_LEAVES = frozenset({
    ast.Constant, ast.Name, ast.Global, ast.Nonlocal, ast.Import, ast.ImportFrom, ast.alias,
    ast.Pass, ast.Break, ast.Continue, ast.MatchStar,
})
_CHILD_FIELDS: dict = {}


def child_fields(node_type: type) -> tuple:
    fields = _CHILD_FIELDS.get(node_type)
    if fields is None:
        if node_type in _LEAVES or not issubclass(node_type, ast.AST):
            fields = ()
        else:
            fields = tuple(name for name in node_type._fields if name not in _SKIPPED_FIELDS)
        _CHILD_FIELDS[node_type] = fields
    return fields


def children_into(node: ast.AST, out: list) -> None:
    """Append the direct child nodes of ``node`` to ``out`` (no generator)."""
    fields = _CHILD_FIELDS.get(type(node))
    if fields is None:
        fields = child_fields(type(node))
    for name in fields:
        value = getattr(node, name, None)
        if value is None:
            continue
        if type(value) is list:
            for item in value:
                if item is not None and isinstance(item, ast.AST):
                    out.append(item)
        elif isinstance(value, ast.AST):
            out.append(value)


def iter_children(node: ast.AST):
    """The direct child nodes of ``node`` (like ``ast.iter_child_nodes``,
    without context/operator nodes)."""
    out: list = []
    children_into(node, out)
    return iter(out)


def walk(node: ast.AST):
    """Every node below and including ``node``, breadth first (the order of
    ``ast.walk``)."""
    todo = deque([node])
    children: list = []
    while todo:
        node = todo.popleft()
        children_into(node, children)
        todo.extend(children)
        children.clear()
        yield node
