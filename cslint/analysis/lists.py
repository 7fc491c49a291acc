"""Index stores into a local that is known to hold a list.

``xs[i] = v`` into a dict may add a key; into a list it replaces an element
(an index past the end raises instead), so the list's own structure -- its
length, None-ness, kind -- is what it was, whoever stores and whatever the
test around the store reads::

    raw = poll(pollers)                 # poll returns a comprehension
    for i, r in enumerate(reqs):
        if raw[i] == SUCCESS and not r.done():
            raw[i] = TRANSFERRING       # the same length on every rank

A local counts as a list at a store when every binding of it in the
function that can reach the store is an assignment to it alone from a list
written out (a display, a comprehension, ``[x] * n``, ``list(...)``) or from
a call of a function of the same module every ``return`` of which writes out
one (``ModuleContext.returns_lists``, ``shapes.returns_only_lists``), or it
is a parameter annotated as a list; any other kind of binding anywhere (a
loop target, ``with``, ``del``, an unannotated parameter) leaves it unknown.
An assignment reaches a store that it ends before, or that a loop holding
both carries it round to: the list a rank marks its own entries in, then
hands to a helper that agrees it, ``marked = [0] * n; for i ...: if ...:
marked[i] = 1``, then ``marked = agree(marked, group)`` after the loop, is a
list at every store, whatever the helper returns.  Such stores join
``FunctionInfo.existing_key_stores``: the dataflow keeps the container's own
structure as it was before the store (``Transfer._bind``).
"""

from __future__ import annotations

import ast

from .astwalk import DEFINITIONS, block_fields, imported_names, parameters
from .bindings import target_names
from .shapes import displays_list

_LIST_BUILTINS = frozenset({"list", "sorted"})
_TRY_STAR = getattr(ast, "TryStar", None)
_MATCH = getattr(ast, "Match", None)


def _annotated_list(annotation) -> bool:
    """``list``, ``List[...]``, ``list[...]``, ``typing.List[...]``."""
    node = annotation.value if type(annotation) is ast.Subscript else annotation
    if type(node) is ast.Attribute:
        return node.attr == "List"
    return type(node) is ast.Name and node.id in ("list", "List")


def list_index_stores(info, stores: list) -> list:
    """The ``id()`` of the stores ``xs[k] = v`` among ``stores`` (Subscript
    targets of a local name, not a slice) whose ``xs`` holds a list on every
    binding of the function (see the module's doc).  Only statements bind
    a name (walrus targets aside: ``FunctionInfo.walrus_by_statement``), so
    the walk never enters an expression."""
    if not stores:
        return []
    names = {store.value.id for store in stores}
    func = info.func
    args = getattr(func, "args", None)
    good: set = set()  # the parameters annotated as lists
    bad: set = set()
    assigned: dict = {}  # name -> [(assignment, whether its value is a list)]
    loops: list = []
    if args is not None:
        for arg in parameters(args, starred=True):
            if arg.arg in names:
                listed = arg.annotation is not None and _annotated_list(arg.annotation) \
                    and arg is not args.vararg and arg is not args.kwarg
                (good if listed else bad).add(arg.arg)
    for walrus in info.walrus_by_statement.values():
        bad.update(node.target.id for node in walrus if type(node.target) is ast.Name)
    stack = list(func.body) if isinstance(func.body, list) else []
    while stack:
        node = stack.pop()
        t = type(node)
        if t is ast.Assign or t is ast.AnnAssign:
            targets = node.targets if t is ast.Assign else [node.target]
            if len(targets) == 1 and type(targets[0]) is ast.Name:
                if targets[0].id in names:
                    assigned.setdefault(targets[0].id, []).append(
                        (node, node.value is not None and _builds_list(info, node.value)))
            else:
                for target in targets:
                    bad.update(target_names(target))
        elif t is ast.AugAssign or t is ast.For or t is ast.AsyncFor:
            bad.update(target_names(node.target))
            if t is not ast.AugAssign:
                loops.append(node)
        elif t is ast.While:
            loops.append(node)
        elif t is ast.With or t is ast.AsyncWith:
            for item in node.items:
                if item.optional_vars is not None:
                    bad.update(target_names(item.optional_vars))
        elif t is ast.Delete:
            for target in node.targets:
                bad.update(target_names(target))
        elif t is ast.Global or t is ast.Nonlocal:
            bad.update(node.names)
        elif t is ast.Import or t is ast.ImportFrom:
            bad.update(imported_names(node))
        elif t in DEFINITIONS:
            bad.add(node.name)
            continue
        elif t is ast.Try or t is _TRY_STAR:
            bad.update(handler.name for handler in node.handlers if handler.name)
        elif t is _MATCH:
            return []  # (its patterns bind names: not followed)
        for field in block_fields(t):
            stack.extend(getattr(node, field))
    out = []
    for store in stores:
        name = store.value.id
        if name in bad:
            continue
        at = (store.lineno, store.col_offset)
        around = [loop for loop in loops if (loop.lineno, loop.col_offset) <= at < (loop.end_lineno, loop.end_col_offset)]
        reaching = [built for node, built in assigned.get(name, ()) if _may_reach(node, at, around)]
        if (reaching or name in good) and all(reaching):
            out.append(id(store))
    return out


def _may_reach(assignment, at: tuple, loops: list) -> bool:
    """Whether ``assignment`` can reach the store at ``at``: it ends before
    it, or one of ``loops`` (those holding the store) holds it too."""
    start = (assignment.lineno, assignment.col_offset)
    if any((loop.lineno, loop.col_offset) <= start < (loop.end_lineno, loop.end_col_offset) for loop in loops):
        return True
    return (assignment.end_lineno, assignment.end_col_offset) <= at


def _builds_list(info, value) -> bool:
    if displays_list(value):
        return True
    if type(value) is not ast.Call:
        return False
    func = value.func
    if type(func) is ast.Name:
        if func.id in _LIST_BUILTINS and func.id not in info.params:
            return True
    elif info.self_attr(func) is None:
        return False  # (a receiver's type is not worked out ahead of its order)
    return info.ctx.returns_lists(info.resolve_ref(func))
