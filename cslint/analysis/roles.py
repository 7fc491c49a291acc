"""Roles told apart by equalities (issue 14, complementary-role-arms).

A loop over the source ranks that consolidates state on a target rank:

    for src in range(world):
        if me == target:
            if src == me: keep own state
            else: receive with a broadcast from src
        else:
            if src == me: send with a broadcast from src
            elif src != target: take the broadcast and drop it

Each test compares this rank's own value (``me``) with values every rank
agrees on (``src``, ``target``), so on each iteration the ranks split into
roles: the target, the source, the others.  Which role a rank takes differs,
but what it issues does not: when ``src == target`` no rank broadcasts, and
otherwise every rank issues the one broadcast, whatever its role.  The arms
of each test issue different sequences, so no comparison of two arms sees
it; leaving out the last ``elif`` (the others no longer take the broadcast)
is a real hang, which the same model must still find.

:func:`equality_tree` reads such a decision at extraction: the ``if`` and
the ``if`` statements nested in its arms whose tests compare two operands
(``==`` or ``!=``), each operand a name, an attribute of one or a constant
that the decision never assigns, down to the statements that are not such
tests, kept as the site sequences their paths may issue.
:func:`roles_agree` answers for one group after the fixpoint: the operands
that differ over the group are this rank's own values, free on each rank;
for every way the agreed operands can compare among themselves, every way
the rank's own values can compare with them and with each other must lead
to the same site sequences.  Only which operands are equal matters to the
tests, so trying every partition of the operands into equal classes (a few
operands: at most :data:`MAX_OPERANDS`) covers every value a rank can hold.
"""

from __future__ import annotations

import ast
from typing import Optional

from ..presets.rank_names import names_world_rank, rank_name_dims
from .astwalk import walk as fast_walk
from .grouptests import tests_membership
from .syntax import dotted, unparse

#: operands of one decision tried at most (the partitions grow as Bell numbers: 203 for 6)
MAX_OPERANDS = 6
#: ``if`` statements of one decision tree at most
MAX_TESTS = 16
_OPERAND_TYPES = (ast.Name, ast.Attribute, ast.Constant)


def equality_tree(alternatives, evaluator, info, stmt: ast.If, env: dict) -> Optional[tuple]:
    """``(tree, constants, atoms)`` of the decision of equality tests
    ``stmt`` belongs to, read from its outermost such ``if`` (see the module
    docstring); None where ``stmt``'s test is not one, or the tree reads
    more operands or tests than the bounds, or a path leaves the block.

    ``tree`` is a block: a tuple of items, each ``("paths", sequences)`` for
    a statement that is no such test (the site sequences its paths may
    issue) or ``(left, equal, right, body, orelse)`` for a test (operand
    indices, whether it asks for equality, the two arms' blocks); per
    operand, ``constants`` holds a constant's value (else None) and
    ``atoms`` what the operand depends on where the decision starts."""
    if _test_of(stmt.test) is None:
        return None
    root = stmt
    parent = info.parents.get(id(root))
    while type(parent) is ast.If and _test_of(parent.test) is not None:
        root, parent = parent, info.parents.get(id(parent))
    operands: dict = {}
    tests = [0]
    tree = _block([root], alternatives, operands, tests)
    if tree is None or len(operands) > MAX_OPERANDS or _assigned(root, operands):
        return None
    atoms = tuple(evaluator.eval(expr, env) if type(expr) is not ast.Constant else frozenset()
                  for expr in operands.values())
    return tree, tuple(_constant_key(expr) for expr in operands.values()), atoms


def groups_handed_out(links, members: dict) -> frozenset:
    """The groups (``group:<text>``) whose members an ``if``/``elif`` chain
    without ``else`` (``links``: its ``if`` statements) hands out among its
    arms; ``members`` maps a group's text to its own list of ranks
    (:class:`~cslint.analysis.communicators.Communicators`).

    A chain of roles over one group, a leader and the members it serves::

        if part == Part.HEAD:
            broadcast(x, src=me, group=g)
        elif part == Part.FOLLOWER and rank in g_ranks:
            broadcast(x, src=head, group=g)

    Every test compares one and the same value of this rank's (its role)
    with a named value (a string, or an upper-case attribute: an enum's
    member), a different one per test, and some test also asks that this
    rank is in the group's own list of ranks (``members``', or the group's
    ``get_process_group_ranks``).  That test restricts one role
    to the group's members by name; the chain reads as the group's members
    handed out by role, and a rank that matches no test as one outside the
    group.  What the model cannot check is that no member of the group
    holds a role the chain does not name (a third role kept in the group
    would skip): the roles come from the project's own tables.  Ranks told
    apart by their rank ids (``me == target``, ``me == src``) are no named
    roles: the ranks equal to neither are an open class, the group's
    bystanders, and such a chain hands out nothing."""
    role = listed = None
    named: set = set()
    for link in links:
        test = link.test
        compared = []
        for conjunct in (test.values if type(test) is ast.BoolOp and type(test.op) is ast.And else (test,)):
            tested = _groups_listed(conjunct, members)
            if tested is None:
                compared.append(conjunct)
            elif listed in (None, tested):
                listed = tested
            else:
                return frozenset()
        found = _role_test(compared[0]) if len(compared) == 1 else None
        if found is None or role not in (None, found[0]) or found[1] in named:
            return frozenset()
        role = found[0]
        named.add(found[1])
    return listed or frozenset()


def _groups_listed(test, members: dict) -> Optional[frozenset]:
    """The groups whose own list of ranks ``rank in <list>`` tests (a list
    of ``members``, or ``get_process_group_ranks(g)``), else None."""
    if type(test) is not ast.Compare or len(test.ops) != 1 or type(test.ops[0]) is not ast.In:
        return None
    text = unparse(test)
    groups = frozenset("group:" + group for group, own in members.items() if tests_membership(text, own))
    listed = test.comparators[0]
    if not groups and type(listed) is ast.Call and listed.args and names_world_rank(unparse(test.left)) \
            and (dotted(listed.func) or "").rpartition(".")[2] == "get_process_group_ranks":
        groups = frozenset({"group:" + unparse(listed.args[0])})
    return groups or None


def _role_test(test) -> Optional[tuple]:
    """``(role, named value)`` texts of ``role == <named value>`` (either
    way round) where ``role`` is no rank id, else None."""
    found = _test_of(test)
    if found is None or not found[1]:
        return None
    left, _equal, right = found
    role, value = (left, right) if _named_value(right) else (right, left)
    if not _named_value(value) or _named_value(role) or rank_name_dims(unparse(role).rpartition(".")[2]):
        return None
    return unparse(role), unparse(value)


def _named_value(expr) -> bool:
    """A string, or an upper-case attribute (``Part.HEAD``): a role's name.
    A number is not one: the tests that tell ranks apart by number (``rank
    == 0``) leave every other number to the bystanders."""
    if type(expr) is ast.Constant:
        return type(expr.value) is str
    return type(expr) is ast.Attribute and expr.attr.isupper()


def _test_of(test) -> Optional[tuple]:
    """``(left, equal, right)`` of ``a == b`` or ``a != b`` between plain
    operands, else None."""
    if type(test) is not ast.Compare or len(test.ops) != 1 or type(test.ops[0]) not in (ast.Eq, ast.NotEq):
        return None
    left, right = test.left, test.comparators[0]
    if not (_plain(left) and _plain(right)):
        return None
    return left, type(test.ops[0]) is ast.Eq, right


def _plain(expr) -> bool:
    while type(expr) is ast.Attribute:
        expr = expr.value
    return type(expr) in _OPERAND_TYPES


def _block(stmts, alternatives, operands: dict, tests: list) -> Optional[tuple]:
    items = []
    for stmt in stmts:
        found = _test_of(stmt.test) if type(stmt) is ast.If else None
        if found is None:
            paths = alternatives.block_paths([stmt])
            if paths is None or any(left for _, left in paths):
                return None
            items.append(("paths", frozenset(sequence for sequence, _ in paths)))
            continue
        tests[0] += 1
        if tests[0] > MAX_TESTS:
            return None
        left, equal, right = found
        body = _block(stmt.body, alternatives, operands, tests)
        orelse = _block(stmt.orelse, alternatives, operands, tests)
        if body is None or orelse is None:
            return None
        items.append((_operand(left, operands), equal, _operand(right, operands), body, orelse))
    return tuple(items)


def _operand(expr, operands: dict) -> int:
    key = ast.unparse(expr)
    if key not in operands:
        operands[key] = expr
    return list(operands).index(key)


def _constant_key(expr):
    """A constant's value (two constants are equal or not by value alone),
    else None."""
    return ("constant", repr(expr.value)) if type(expr) is ast.Constant else None


def _assigned(root: ast.If, operands: dict) -> bool:
    """Whether the decision binds a name or attribute an operand reads
    (``self.rank = ...``, or ``self = ...`` for ``self.rank``)."""
    read = set()
    for expr in operands.values():
        while type(expr) in (ast.Name, ast.Attribute):
            read.add(ast.unparse(expr))
            expr = expr.value if type(expr) is ast.Attribute else None
    for node in fast_walk(root):
        if type(node) in (ast.Name, ast.Attribute) and type(node.ctx) is not ast.Load and ast.unparse(node) in read:
            return True
    return False


def roles_agree(tree: tuple, constants: tuple, divergent: tuple, sequence) -> bool:
    """Whether every rank issues the same site sequences through ``tree``
    whatever its own operands hold (``divergent``: per operand, whether it
    differs over the group), given the agreed ones; ``sequence`` maps a site
    sequence to the collectives it issues over the group."""
    outcomes: dict = {}
    for key, classes in _ways_by_agreed(constants, divergent):
        issued = _issued(tree, classes, sequence)
        if outcomes.setdefault(key, issued) != issued:
            return False
    return True


def role_ways(tree: tuple, constants: tuple, divergent: tuple) -> list:
    """For each way the agreed operands can compare among themselves, the
    ways a rank may go through ``tree`` whatever its own values hold (each
    the site sequences of one role), as :func:`roles_agree` tells them
    apart: arms the route comparison reads (which communicators each role
    asks, :meth:`~cslint.analysis.uniformity.UniformityInfo.routes_part`)."""
    outcomes: dict = {}
    for key, classes in _ways_by_agreed(constants, divergent):
        outcomes.setdefault(key, []).append(tuple(_paths_taken(tree, classes)))
    return [outcomes[key] for key in sorted(outcomes)]


def _ways_by_agreed(constants: tuple, divergent: tuple):
    """``(key, classes)`` for each partition of the operands into equal
    classes that the constants allow, ``key`` how the agreed operands (those
    ``divergent`` says do not differ) compare among themselves in it."""
    agreed = [index for index, differs in enumerate(divergent) if not differs]
    for classes in _partitions(len(divergent)):
        if _consistent(classes, constants):
            yield tuple(classes[i] == classes[j] for i in agreed for j in agreed if i < j), classes


def _paths_taken(block: tuple, classes: tuple) -> list:
    """The site sequences a rank whose operands compare as ``classes`` may run through ``block``."""
    out: list = []
    for item in block:
        if item[0] == "paths":
            out.extend(item[1])
        else:
            left, equal, right, body, orelse = item
            out.extend(_paths_taken(body if (classes[left] == classes[right]) == equal else orelse, classes))
    return out


def _partitions(count: int):
    """Every partition of ``count`` operands into equal classes, as the
    class number of each operand (restricted growth strings)."""
    def grow(prefix, top):
        if len(prefix) == count:
            yield tuple(prefix)
            return
        for label in range(top + 2):
            yield from grow(prefix + [label], max(top, label))
    yield from grow([], -1)


def _consistent(classes: tuple, constants: tuple) -> bool:
    """Constants are equal exactly when their values are."""
    seen: dict = {}
    for label, constant in zip(classes, constants):
        if constant is None:
            continue
        if seen.setdefault(label, constant) != constant:
            return False
    values = [(label, constant) for label, constant in zip(classes, constants) if constant is not None]
    return all(a[0] == b[0] for a in values for b in values if a[1] == b[1])


def _issued(block: tuple, classes: tuple, sequence) -> frozenset:
    """The collective sequences a rank whose operands compare as ``classes``
    may issue through ``block``."""
    issued = frozenset({()})
    for item in block:
        if item[0] == "paths":
            options = frozenset(sequence(path) for path in item[1])
        else:
            left, equal, right, body, orelse = item
            holds = (classes[left] == classes[right]) == equal
            options = _issued(body if holds else orelse, classes, sequence)
        issued = frozenset(before + after for before in issued for after in options)
    return issued
