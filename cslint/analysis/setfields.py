"""Fields a method sets and then reads itself.

``self.overflow = False`` followed by ``if not self.overflow:`` reads the
value just written, not every value any method of the class ever wrote
(a checkpoint's flag loaded on another path).  The CFG dataflow keeps, for
each field a function assigns as ``self.attr = value``, what the field holds
at each node under the key :func:`field_key`: on entry, and wherever the
field may have changed behind the function's back, that is the field read
from the whole-tree tables (:func:`~cslint.analysis.atoms.field_read`, what
every write of the class family makes it); after the assignment, the value
assigned (with the implicit flow of the tests around it).

What may change a field behind the function's back: any call but a few
builtins that run no code of the tree on the values a method passes them
(:data:`INERT_BUILTINS`), an ``await`` or a ``yield`` (other code runs while
the function waits), and any store into an attribute of that name that is
not the plain assignment itself (``other.attr = v``, which may be ``self``;
``self.attr[k] = v`` or ``self.attr += v``, which change what it holds in
place).  A node that does any of these sees the table's field from its
start (even a read before its call), so a test that calls a method and then
reads the field (``if self.check() and self.flag:``) reads the table.  A
container written to the field (a display, a comprehension, ``list()``)
puts the table's field back too: the whole-tree pass keeps its own
structure apart from its elements (``atoms.own_field``) and this key would
not.  Another thread writing the field between two statements is not
modelled, as in the rest of the value model.
"""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import walk as fast_walk
from .atoms import field_read, own_field
from .vocabulary import CONTAINER_FACTORIES

#: builtins whose call runs no method of the tree that could write a field
#: (``isinstance``'s ``__instancecheck__`` and ``len``'s ``__len__`` of a
#: project class aside, which write nothing in any tree seen)
INERT_BUILTINS = frozenset({
    "isinstance", "issubclass", "len", "int", "float", "bool", "str", "abs", "min", "max", "range",
    "enumerate", "zip", "tuple", "list", "dict", "set", "frozenset", "sorted", "any", "all", "hasattr",
    "getattr", "type", "id", "repr", "round", "sum", "callable",
})

_CONTAINERS = (ast.List, ast.Dict, ast.Set, ast.Tuple, ast.ListComp, ast.DictComp, ast.SetComp)


def field_key(attr: str) -> tuple:
    """The dataflow's key for what ``self.attr`` holds here (no variable
    name: ``self.`` is in it, so no name-keyed refinement reaches it)."""
    return ("field", "self." + attr)


def assigned_field(s: ast.stmt, self_name: Optional[str]) -> Optional[str]:
    """``attr`` when ``s`` is ``self.attr = value`` (one target, or an
    annotated assignment with a value)."""
    if type(s) is ast.Assign and len(s.targets) == 1:
        target = s.targets[0]
    elif type(s) is ast.AnnAssign and s.value is not None:
        target = s.target
    else:
        return None
    if type(target) is ast.Attribute and type(target.value) is ast.Name and target.value.id == self_name:
        return target.attr
    return None


def entry_fields(class_key: Optional[str], attrs: frozenset) -> dict:
    """What each of ``attrs`` holds on entry: the whole-tree table's field."""
    return {field_key(attr): frozenset({field_read(class_key, attr)}) for attr in attrs}


def changes_fields(s: ast.AST, exprs: list, calls: list, attrs: frozenset, self_name: str) -> bool:
    """Whether the node of statement ``s`` evaluating ``exprs`` (with ``calls``,
    the function's :class:`~cslint.analysis.function.CallInfo` of them) may
    change a field of ``attrs`` other than by a plain assignment (see the
    module's docstring)."""
    for info in calls:
        func = info.call.func
        if type(func) is not ast.Name or func.id not in INERT_BUILTINS:
            return True
    for expr in exprs:
        for node in fast_walk(expr):
            t = type(node)
            if t is ast.Await or t is ast.Yield or t is ast.YieldFrom:
                return True
    if isinstance(s, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete, ast.For, ast.AsyncFor, ast.With,
                      ast.AsyncWith)):
        plain = assigned_field(s, self_name)
        for target in _targets(s):
            for node in fast_walk(target):
                if type(node) is ast.Attribute and node.attr in attrs and not (node is target and plain is not None):
                    return True
    return False


def own_of_set_field(value: frozenset, class_key: Optional[str], attr: str) -> frozenset:
    """The own structure of what ``self.attr`` holds where the function set it
    (``value``, under :func:`field_key`): the table's own structure for the
    table's field, and what the function assigned itself as it is (never a
    container: that puts the table's field back)."""
    table = field_read(class_key, attr)
    return frozenset(field_read(class_key, own_field(attr)) if atom == table else atom for atom in value)


def _targets(s) -> list:
    t = type(s)
    if t is ast.Assign or t is ast.Delete:
        return list(s.targets)
    if t is ast.AugAssign or t is ast.AnnAssign or t is ast.For or t is ast.AsyncFor:
        return [s.target]
    return [item.optional_vars for item in s.items if item.optional_vars is not None]


def builds_container(value) -> bool:
    """Whether ``value`` makes a container (its own structure is kept apart
    by the whole-tree pass, not by :func:`field_key`)."""
    if isinstance(value, _CONTAINERS):
        return True
    if type(value) is ast.Call:
        func = value.func
        name = func.id if type(func) is ast.Name else func.attr if type(func) is ast.Attribute else None
        return name in CONTAINER_FACTORIES
    return False


class SetFields:
    """One function's fields it assigns as ``self.attr = value`` and the CFG
    nodes that may change them otherwise (:func:`changes_fields`), for the
    dataflow: what each holds on entry, at a node that may change it, and
    after its plain assignment."""

    __slots__ = ("info", "attrs", "_changes")

    def __init__(self, info, graph, evaluator):
        self.info = info
        found = set()
        self_name = info.self_name if info.class_key else None
        if self_name:
            for node in graph.nodes:  # (the CFG's statements: not those of a nested definition)
                s = node.stmt
                if type(s) is ast.Assign or type(s) is ast.AnnAssign:
                    attr = assigned_field(s, self_name)
                    if attr is not None:
                        found.add(attr)
        #: the fields it assigns as ``self.attr = value``, which its evaluator reads from the dataflow's keys
        self.attrs = evaluator.set_fields = frozenset(found)
        self._changes: dict = {}  # node -> whether it may change a field (changes_fields)

    def entry(self) -> dict:
        return entry_fields(self.info.class_key, self.attrs)

    def at_node(self, n: int, node, env: dict, fork) -> dict:
        """``env`` on entry to node ``n``, with the table's fields back where the node may change them."""
        changes = self._changes.get(n)
        if changes is None:
            info = self.info
            node_info = info.node_info(node)
            changes = self._changes[n] = node.stmt is not None and changes_fields(
                node.stmt, node_info.exprs, node_info.calls, self.attrs, info.self_name)
        if not changes:
            return env
        table = self.entry()
        if all(env.get(key) == atoms for key, atoms in table.items()):
            return env
        out = fork(env)
        out.update(table)
        return out

    def bind(self, s: ast.stmt, flow, evaluate) -> None:
        """``self.attr = value``: the field holds the value (and the implicit flow) from here."""
        attr = assigned_field(s, self.info.self_name)
        if attr is None or attr not in self.attrs:
            return
        key = field_key(attr)
        if builds_container(s.value):
            flow.write(key, frozenset({field_read(self.info.class_key, attr)}))
        elif flow.single_rank:
            flow.write(key, frozenset())
        else:
            flow.write(key, evaluate(s.value, flow.env) | flow.implicit)
