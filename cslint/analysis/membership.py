"""A rank that picks a group's rank list by its membership in that list.

``if rank in ranks:`` outside a loop over the parts of a partition
(:func:`cslint.analysis.arms.selects_own_part` takes those) still selects
this rank's own group when all its arm does is hand on the tested list
itself::

    group_ranks = [[r] for r in all_ranks]
    if global_rank in all_ranks:
        group_ranks = [all_ranks]

Every member of ``all_ranks`` takes the arm and holds the same value built
from that list; a rank outside it keeps the value the names held before,
which is no group of the list's members.  So the test is the same on every
member of any group built from what the arm writes (issue 14: membership in
a group's rank list is uniform within that group): what it writes differs
in contents (which list) only.

The arm must write only values built from the tested list and never from
the tested rank (``x = table[rank]`` is this rank's own entry, which may be
missing), and each name it writes must hold a value other than ``None``
before it (an assignment earlier in the same block) or get one in an
``else``: ``x = None; if rank in ranks: x = ranks`` leaves ``x`` absent on
the other ranks, a difference in structure that the test decides.
"""

from __future__ import annotations

import ast

from ..presets.rank_names import rank_name_dims
from .astwalk import walk as fast_walk, walked
from .grouptests import is_size_expr
from .presence import is_none_literal
from .syntax import dotted

def _names(node: ast.AST) -> set:
    return {n.id for n in walked(node) if type(n) is ast.Name}


def _writes(block: list, listed: str, rank_names: set) -> dict:
    """target text -> value of each assignment of ``block`` when every
    statement is a plain assignment of a value built from ``listed`` and not
    from the tested rank; None otherwise."""
    written: dict = {}
    for stmt in block:
        if type(stmt) is not ast.Assign:
            return None
        names = _names(stmt.value)
        if listed not in names or names & rank_names:
            return None
        for target in stmt.targets:
            text = dotted(target)
            if not text:
                return None
            written[text] = stmt.value
    return written


def _held_before(stmt: ast.If, blocks: dict, targets: set) -> bool:
    """Whether each of ``targets`` is assigned a value other than None by a
    statement before ``stmt`` in the block that holds it (``blocks``:
    statement -> its block, as :attr:`FunctionInfo.blocks`)."""
    block = blocks.get(id(stmt))
    if block is None:
        return False
    held: set = set()
    for earlier in block:
        if earlier is stmt:
            break
        if type(earlier) is ast.Assign:
            for target in earlier.targets:
                text = dotted(target)
                if text in targets:
                    if is_none_literal(earlier.value):
                        held.discard(text)
                    else:
                        held.add(text)
    return held >= targets


def selects_listed_group(stmt: ast.AST, blocks: dict) -> bool:
    """Whether ``stmt`` is ``if <rank> in <ranks>:`` whose arm writes only
    values built from ``<ranks>`` itself over names that hold a value other
    than None on the ranks that do not take it (see the module text)."""
    if type(stmt) is not ast.If:
        return False
    test = stmt.test
    if type(test) is not ast.Compare or len(test.ops) != 1 or type(test.ops[0]) is not ast.In \
            or type(test.comparators[0]) is not ast.Name:
        return False
    listed = test.comparators[0].id
    rank_names = _names(test.left)
    if not rank_names or listed in rank_names:
        return False
    written = _writes(stmt.body, listed, rank_names) if stmt.body else None
    if not written:
        return False
    if stmt.orelse:
        others = _writes(stmt.orelse, listed, rank_names)
        if others is None:
            others = {}
            for other in stmt.orelse:
                if type(other) is not ast.Assign or is_none_literal(other.value):
                    return False
                others.update((dotted(t), other.value) for t in other.targets)
        return set(others) >= set(written)
    return _held_before(stmt, blocks, set(written))


def skips_own_pass(stmt: ast.AST, parents: dict, sizes=()) -> bool:
    """Whether ``stmt`` is ``if <i> == <rank>: continue`` right inside ``for
    <i> in range(<a group's size>)``: a loop over every rank of the group in
    which each rank skips the pass of its own index (``_can_p2p``: check
    every peer but yourself).  Every member skips exactly one pass, so all
    make as many passes, and what the rest of the body enters it enters as
    often on every member (which pass is skipped is the rank's own, like its
    part of a partition).  ``rank`` must name this process's rank (a rank
    name, ``get_rank()``) and the size be a group size (``sizes``: as for
    :func:`~cslint.analysis.grouptests.is_size_expr`); neither is rebound in the
    loop.  The rank is taken to be the group's, as the size's."""
    if type(stmt) is not ast.If or stmt.orelse or len(stmt.body) != 1 or type(stmt.body[0]) is not ast.Continue:
        return False
    test = stmt.test
    if type(test) is not ast.Compare or len(test.ops) != 1 or type(test.ops[0]) is not ast.Eq:
        return False
    loop = _over_group_size(stmt, parents, sizes)
    if loop is None:
        return False
    index = loop.target.id
    sides = (test.left, test.comparators[0])
    if not any(type(side) is ast.Name and side.id == index for side in sides):
        return False
    rank = sides[1] if type(sides[0]) is ast.Name and sides[0].id == index else sides[0]
    if not _names_this_rank(rank):
        return False
    rebound = {node.id for part in loop.body for node in walked(part)
               if type(node) is ast.Name and type(node.ctx) is not ast.Load}
    return index not in rebound and not (_names(rank) & rebound)


def _names_this_rank(expr: ast.AST) -> bool:
    """``rank``, ``self.tp_rank``, ``dist.get_rank(group)``: this process's rank, by its name."""
    if type(expr) is ast.Call:
        return not expr.args[1:] and (dotted(expr.func) or "").rpartition(".")[2] == "get_rank"
    text = dotted(expr)
    return bool(text) and rank_name_dims(text.rpartition(".")[2]) is not None



def _own_index_side(test: ast.AST):
    """The side of ``<index> == <this rank>`` (either order) that is not
    this rank: a name, or ``<part>[0]`` of a name; None for any other test."""
    if type(test) is not ast.Compare or len(test.ops) != 1 or type(test.ops[0]) is not ast.Eq:
        return None
    for index, rank in ((test.left, test.comparators[0]), (test.comparators[0], test.left)):
        if not _names_this_rank(rank):
            continue
        if type(index) is ast.Name:
            return index
        if type(index) is ast.Subscript and type(index.value) is ast.Name \
                and type(index.slice) is ast.Constant and type(index.slice.value) is int and index.slice.value == 0:
            return index
    return None


def tests_own_index(stmt: ast.AST) -> bool:
    """Whether ``stmt`` is ``if <index> == <this rank>:`` or ``if
    <part>[0] == <this rank>:`` (either order): the shape
    :func:`selects_own_pass` looks for, told from the statement alone."""
    return type(stmt) is ast.If and _own_index_side(stmt.test) is not None


def _one_element_list_of(block: list, stmt: ast.AST, part: str):
    """The element ``e`` of the last ``<part> = [e]`` before ``stmt`` in
    ``block`` when no other statement between them binds ``part``."""
    element = None
    for earlier in block:
        if earlier is stmt:
            return element
        if type(earlier) is ast.Assign and len(earlier.targets) == 1 and type(earlier.targets[0]) is ast.Name \
                and earlier.targets[0].id == part:
            value = earlier.value
            single = type(value) is ast.List and len(value.elts) == 1 and type(value.elts[0]) is not ast.Starred
            element = value.elts[0] if single else None
        elif any(type(n) is ast.Name and n.id == part and type(n.ctx) is not ast.Load for n in fast_walk(earlier)):
            element = None
    return None


def selects_own_pass(stmt: ast.AST, parents: dict, sizes=()) -> bool:
    """Whether ``stmt`` is ``if <i> == <rank>:`` right inside ``for <i> in
    range(<a group's size>)``, or ``if <part>[0] == <rank>:`` where ``<part>
    = [<i>]`` is bound just before it in the loop's body (a one-element rank
    list, the group of one rank: membership in it spelt as an equality)::

        for i in range(world_size):
            i = [i]
            group = dist.new_group(ranks=i)
            if i[0] == global_rank:
                self.own_group = group

    Every member takes the arm in exactly one pass, its own (the loop visits
    every rank of the group once), so what the arm writes is written on every
    member and differs in contents only, as a rank finding its own part of a
    partition (:func:`~cslint.analysis.arms.selects_own_part`).  ``rank``
    names this process's rank and the size is a group size (as for
    :func:`skips_own_pass`); the loop's variable is bound nowhere else in
    the body and the rank not at all.  ``<part>[0]`` of a longer list would
    be its first rank alone, so only a display of one element counts."""
    side = _own_index_side(stmt.test) if type(stmt) is ast.If else None
    if side is None:
        return False
    loop = _over_group_size(stmt, parents, sizes)
    if loop is None:
        return False
    index = loop.target.id
    if type(side) is ast.Subscript:
        element = _one_element_list_of(loop.body, stmt, side.value.id)
        if type(element) is not ast.Name or element.id != index:
            return False
        listed = side.value.id
    elif side.id != index:
        return False
    else:
        listed = None
    rank = stmt.test.comparators[0] if side is stmt.test.left else stmt.test.left
    bindings = [node for part in loop.body for node in walked(part)
                if type(node) is ast.Name and type(node.ctx) is not ast.Load]
    if _names(rank) & {node.id for node in bindings}:
        return False
    # the loop's variable keeps its pass's value: bound nowhere in the body
    # but by the one-element list made of it (then read through that list)
    rebinding = [node for node in bindings if node.id == index]
    return not rebinding or (listed == index and len(rebinding) == 1)


def _over_group_size(stmt: ast.stmt, parents: dict, sizes):
    """The loop directly around ``stmt`` when it is ``for i in range(n)`` or
    ``range(0, n)`` with ``n`` a group size (one pass per rank of the group),
    else None."""
    loop = parents.get(id(stmt))
    if type(loop) is not ast.For or type(loop.target) is not ast.Name or type(loop.iter) is not ast.Call \
            or dotted(loop.iter.func) != "range" or loop.iter.keywords or not 1 <= len(loop.iter.args) <= 2:
        return None
    start = loop.iter.args[0]
    if len(loop.iter.args) == 2 and not (type(start) is ast.Constant and start.value == 0) \
            or not is_size_expr(loop.iter.args[-1], sizes):
        return None
    return loop
