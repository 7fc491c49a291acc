"""Tests every path of which stores one element into a container alike.

A store into a container (``out.append(x)``, ``out[k] = x``) changes the
container itself by one element, whatever the element is: the dataflow keeps
that apart as the container's own structure (``("own", name)``, a field's
``own_field``), made of the store's other arguments and the implicit flow, as
a store on some ranks only makes the container longer there.  A test whose
every path stores exactly one element the same way decides which element,
never how many::

    for member, h in enumerate(handles):
        if member == rank:
            out.append(t)
            continue
        out.append(h)

Each rank appends one element per member, so ``out`` has one entry per
member on every rank, whatever each rank's own entry is: the test reaches
the elements, not the own structure.  The paths are read off the syntax: an
``if`` whose arms (with what follows it in a loop's body, where an arm ends
by ``continue``) store the same number of times into the container through
the same adder with the same other arguments (``append``; ``xs[k] = v`` with
the same key text).  A path that leaves otherwise (``break``, ``return``,
``raise``), a loop or ``try`` holding a store, or another kind of store into
the same container leaves the test deciding the own structure as before.
"""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import BLOCKS_OF, DEFINITIONS, LOOPS, holds_kind, walked
from .syntax import dotted, unparse
from .vocabulary import ELEMENT_ADDERS, SPLITTING_CALLS

_EXITS = frozenset({ast.Continue, ast.Break, ast.Return, ast.Raise})  # (what may leave a statement)

_WITH = (ast.With, ast.AsyncWith)
_LEAVES = (ast.Break, ast.Return, ast.Raise)
#: the most paths a test's arms are followed along (past it: not alike)
MAX_PATHS = 16


def call_key(call: ast.Call) -> Optional[tuple]:
    """(container text, adder, other arguments' text) of ``xs.append(v)`` and
    the like (:data:`ELEMENT_ADDERS`, the element passed by position, no
    keywords); None for any other call."""
    func = call.func
    if type(func) is not ast.Attribute:
        return None
    position = ELEMENT_ADDERS.get(func.attr)
    if position is None or position >= len(call.args) or call.keywords \
            or any(type(arg) is ast.Starred for arg in call.args):
        return None
    container = dotted(func.value)
    if not container:
        return None
    return container, func.attr, tuple(unparse(arg) for index, arg in enumerate(call.args) if index != position)


def subscript_key(target) -> Optional[tuple]:
    """The key of a store ``xs[k] = v`` into ``target`` (not a slice)."""
    if type(target) is not ast.Subscript or type(target.slice) is ast.Slice:
        return None
    container = dotted(target.value)
    return (container, "[]", (unparse(target.slice),)) if container else None


#: The builtins that collect what a generator yields, one element each.
COLLECTING_BUILTINS = frozenset({"tuple", "list"})


def built_comprehension(value) -> Optional[ast.expr]:
    """The comprehension a value is built of, one element per iteration: a
    list comprehension, or ``tuple(...)``/``list(...)`` of a generator or a
    list comprehension; None for any other value."""
    t = type(value)
    if t is ast.ListComp:
        return value
    if t is ast.Call and type(value.func) is ast.Name and value.func.id in COLLECTING_BUILTINS \
            and len(value.args) == 1 and not value.keywords and type(value.args[0]) in (ast.GeneratorExp, ast.ListComp):
        return value.args[0]
    return None


def statement_key(stmt) -> Optional[tuple]:
    """The store key of a statement that stores one element and does
    nothing else: ``xs.append(v)`` as a statement, ``xs[k] = v`` (one
    target); and of ``xs = [f(p) for p in ps]`` (one name), which makes the
    container anew with one element per iteration of its generators: every
    arm binding ``xs`` to a comprehension of the same generators gives it
    as many elements, whatever each arm's elements are."""
    t = type(stmt)
    if t is ast.Expr and type(stmt.value) is ast.Call:
        return call_key(stmt.value)
    if t is ast.Assign and len(stmt.targets) == 1:
        target = stmt.targets[0]
        if type(target) is ast.Name:
            comp = built_comprehension(stmt.value)
            return None if comp is None else (target.id, "=", tuple(ast.dump(gen) for gen in comp.generators))
        return subscript_key(target)
    return None


def split_sizes(value) -> Optional[ast.expr]:
    """The sizes argument of ``torch.split(t, sizes)`` or ``t.split(sizes)``
    (:data:`~cslint.analysis.vocabulary.SPLITTING_CALLS`) where it is a
    name or a comprehension, which gives one piece per size: the result's
    own structure is the list's (``Transfer.assign``).  None otherwise."""
    if type(value) is not ast.Call or type(value.func) is not ast.Attribute or value.func.attr not in SPLITTING_CALLS:
        return None
    position = 1 if dotted(value.func.value) == "torch" else 0
    if position >= len(value.args) or any(type(arg) is ast.Starred for arg in value.args):
        return None
    sizes = value.args[position]
    return sizes if type(sizes) in (ast.Name, ast.ListComp) else None


def _containers_stored(node) -> set:
    """The container texts any store below ``node`` names (another key into
    the same container makes its paths unknown)."""
    out = set()
    for sub in walked(node):
        if type(sub) is ast.Call:
            key = call_key(sub)
            if key is not None:
                out.add(key[0])
        elif type(sub) is ast.Subscript and type(sub.ctx) is ast.Store:
            key = subscript_key(sub)
            if key is not None:
                out.add(key[0])
    return out


def _paths(stmts, key, states: set) -> Optional[set]:
    """The (stores so far, ended by ``continue``) of each path through
    ``stmts`` from ``states``; None where a path is not followed."""
    for stmt in stmts:
        found = set()
        for count, ended in states:
            if ended:
                found.add((count, ended))
                continue
            step = _statement_paths(stmt, key)
            if step is None:
                return None
            found.update((count + more, end) for more, end in step)
        if len(found) > MAX_PATHS:
            return None
        states = found
    return states


def _statement_paths(stmt, key) -> Optional[set]:
    t = type(stmt)
    if t is ast.Continue:
        return {(0, True)}
    if t in _LEAVES:
        return None
    if t is ast.If:
        body = _paths(stmt.body, key, {(0, False)})
        orelse = _paths(stmt.orelse, key, {(0, False)})
        return None if body is None or orelse is None or key[0] in _stored_in(stmt.test) else body | orelse
    if t in _WITH:
        return _paths(stmt.body, key, {(0, False)})
    if t in DEFINITIONS:
        return {(0, False)}
    own = statement_key(stmt)
    if own is not None and own == key:
        return {(1, False)}
    if key[0] in _stored_in(stmt):
        return None  # another store into it, or one inside a loop or a try
    if t in LOOPS or t is ast.Try or t.__name__ in ("TryStar", "Match"):
        return None if _exits(stmt) else {(0, False)}
    return {(0, False)}


def _exits(stmt) -> bool:
    """Whether a ``continue``, ``break``, ``return`` or ``raise`` below
    ``stmt`` may leave more than ``stmt`` (conservatively: any)."""
    return holds_kind(stmt, _EXITS)


#: id(node) -> (node, :func:`_containers_stored` of it), for the statements of the function asked now
_STORED: dict = {}


def _stored_in(node) -> set:
    """:func:`_containers_stored`, kept per node while one function is asked about."""
    found = _STORED.get(id(node))
    if found is None or found[0] is not node:
        found = _STORED[id(node)] = (node, _containers_stored(node))
    return found[1]


def _alike(states: Optional[set]) -> bool:
    return states is not None and len({count for count, _ended in states}) == 1


def _statements(stmts: list):
    """Every statement of ``stmts`` and of the blocks below them (not into
    nested definitions): a walk of statements alone, never of expressions."""
    stack = list(stmts)
    while stack:
        stmt = stack.pop()
        yield stmt
        t = type(stmt)
        if t in DEFINITIONS:
            continue
        fields = BLOCKS_OF[t]
        for field in fields:
            block = getattr(stmt, field)
            if block:
                for sub in block:
                    if type(sub) is ast.ExceptHandler or type(sub) is ast.match_case:
                        stack.extend(sub.body)
                    else:
                        stack.append(sub)



def _keys_under(stmt, containers: frozenset) -> list:
    """The store keys of the statements below ``stmt`` into ``containers``."""
    keys = set()
    for sub in _statements([stmt]):
        if type(sub) is ast.Expr or type(sub) is ast.Assign:
            key = statement_key(sub)
            if key is not None and key[0] in containers:
                keys.add(key)
    return sorted(keys)


def alike_tests(block: list, index: int, in_loop_body: bool, containers: frozenset) -> list:
    """(key, through the rest) for each key of a store into ``containers``
    every path through the ``if`` at ``block[index]`` makes alike: by its
    arms alone (False), or -- in a loop's own body, where an arm ends by
    ``continue`` -- by its arms and the rest of the body (True: the rest's
    stores are decided alike too)."""
    stmt = block[index]
    out = []
    _STORED.clear()  # (kept for one test's questions only)
    for key in _keys_under(stmt, containers):
        alone = _paths([stmt], key, {(0, False)})
        if _alike(alone) and not any(ended for _count, ended in alone):
            out.append((key, False))
        elif in_loop_body and _alike(_paths(block[index:], key, {(0, False)})):
            out.append((key, True))
    return out


def tests_around_stores(body: list, parents: dict, containers: frozenset) -> frozenset:
    """The ids of the ``if`` statements of a function (``body``) that hold a
    store into one of ``containers``: the only ones :func:`alike_tests`
    can find anything under."""
    out = set()
    for node in _statements(body):
        if type(node) is ast.Expr or type(node) is ast.Assign:
            key = statement_key(node)
            if key is not None and key[0] in containers:
                parent = parents.get(id(node))
                while parent is not None and type(parent) not in DEFINITIONS and id(parent) not in out:
                    if type(parent) is ast.If:
                        out.add(id(parent))
                    parent = parents.get(id(parent))
    return frozenset(out)


def in_loop_body(block: list, parents: dict) -> bool:
    """Whether ``block`` is a loop's own body."""
    parent = parents.get(id(block[0])) if block else None
    return type(parent) in LOOPS and block is parent.body


class AlikeStores:
    """For one function: the statements whose tests decide which element a
    store into one of ``containers`` stores, not how many
    (:func:`alike_tests`), asked by the CFG dataflow per store statement.
    ``parents``/``blocks``: as :attr:`FunctionInfo.parents` and
    :attr:`FunctionInfo.blocks`."""

    def __init__(self, parents: dict, blocks: dict, containers: frozenset):
        self.parents = parents
        self.blocks = blocks
        self.containers = containers
        self._regions: dict = {}  # id(store statement) -> ids of the statements whose tests it leaves out

    def region(self, stmt) -> frozenset:
        """The ids of the statements (and everything under them) whose tests
        ``stmt``'s store leaves out of what it changes of its container: the
        outermost ``if`` around it, or before it in its loop's body, whose
        paths store alike (with the rest of that body where that needed
        it); below the innermost loop around it only."""
        found = self._regions.get(id(stmt))
        if found is not None:
            return found
        key = statement_key(stmt)
        best = None
        child, parent = stmt, self.parents.get(id(stmt))
        while key is not None and key[0] in self.containers:
            block = self.blocks.get(id(child))
            if block is None:
                break
            loop_body = type(parent) in LOOPS and block is parent.body
            position = next((i for i, s in enumerate(block) if s is child), None)
            for index in range(0, len(block) if position is None else position + 1):
                if type(block[index]) is not ast.If or (index != position and not loop_body):
                    continue
                for found_key, rest in alike_tests(block, index, loop_body, self.containers):
                    if found_key == key and (rest or index == position):
                        best = block[index:] if rest else [block[index]]
                        break
                if best is not None and best[0] is block[index]:
                    break
            if loop_body or parent is None:
                break  # a test outside the loop decides how many iterations store
            child, parent = parent, self.parents.get(id(parent))
        ids = frozenset(id(sub) for sub in _statements(best)) if best else frozenset()
        self._regions[id(stmt)] = ids
        return ids


def store_alike(dataflow, n: int):
    """For the CFG dataflow's node ``n`` (a store in ``dataflow.stores``'
    containers): the :attr:`~cslint.analysis.flows.Flow.alike` of its
    walk, which gives its own store key the implicit flow into the names it
    binds (``binding_implicit``) without the tests of its region
    (:meth:`AlikeStores.region`); None where none is left out."""
    stores = dataflow.stores
    if stores is None:
        return None
    stmt = dataflow.graph.nodes[n].stmt
    region = stores.region(stmt) if isinstance(stmt, ast.stmt) else None
    if not region:
        return None
    key = statement_key(stmt)
    nodes = dataflow.graph.nodes

    def alike(asked: tuple) -> Optional[frozenset]:
        if asked != key:
            return None
        skipped = dataflow.binding_skips(n)

        def left(d: int, _label) -> bool:
            return d in skipped or id(nodes[d].stmt) in region

        atoms = dataflow._deciding_atoms(n, left)
        return dataflow._as_implicit(n, atoms, left) if atoms else atoms

    return alike
