"""Tests of one ``if`` chain that decide each other (issue 14, correlated guards).

A site in the arm of ``elif in_order:`` also lies on the false side of the
``if not in_order and should_log():`` before it, but that first test cannot
hold where the second does: its conjunct ``not in_order`` is false there, so
whatever ``should_log()`` is on each rank, every rank with ``in_order`` set
reaches the arm.  A test on whose false side a site lies is left out of the
site's conditions when a test on whose true side the site also lies holds a
conjunct that contradicts one of the first test's conjuncts.  An early exit
is also left out where the false test of an ``if`` whose ``else`` holds the
site says the contrary of one of its conjuncts (what :func:`held_where` finds
there)::

    sharded = cache is not None and sharded_mode
    if not sharded and cache.fits(rows):   # rows: this rank's own
        return out
    if not sharded:
        ...
    else:
        dist.all_reduce(out)

The ranks that leave had ``not sharded``; every rank reaching the gather
has ``sharded``: where the setting is alike no rank leaves before it, and
where it is not, the ``if not sharded`` test, which is kept, parts them.

Both conjuncts read the function's own local names only (no call, attribute
or subscript), none of which it declares ``global`` or ``nonlocal`` or the
outer of the two statements assigns (or, for an early exit before the other
test, which the function binds more than once or in a loop): the two tests
then read the same values, so the contradiction holds on every path between
them (``if cached is None and rank == 0: return`` before ``if cached is not
None:``).  Only where nothing done to the object in between can change the
test: an identity test (``is None``), or names bound to a truth value, a
number or a string, or read nowhere but in tests (``not pending`` of a list
the function appends to between the tests is true at one and false at the
other).  A test on whose true side the site lies is never left out, nor is
one whose ``else`` holds it left out by another such, so no two tests can
leave each other out.
"""
from __future__ import annotations

import ast

from . import cfg as cfgmod
from .astwalk import iter_children, walked
from .membership import skips_own_pass

_NEGATED = {ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
            ast.In: ast.NotIn, ast.NotIn: ast.In}


def _conjuncts(test) -> list:
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        out = []
        for value in test.values:
            out.extend(_conjuncts(value))
        return out
    return [test]


def _plain(expr) -> bool:
    """Whether ``expr`` reads only names and constants (no call, attribute,
    subscript or walrus can change what it reads between two tests)."""
    for node in walked(expr):  # (no context or operator node: each is read on its parent)
        t = type(node)
        if t is ast.Name:
            if type(node.ctx) is not ast.Load:
                return False
        elif t is ast.UnaryOp:
            if type(node.op) is not ast.Not:
                return False
        elif t is not ast.Constant and t is not ast.Compare and t is not ast.BoolOp:
            return False  # (a comparison's operators and a short-circuit's are all plain)
    return True


def _key(expr) -> str:
    """What ``expr`` says, as a key: its ``ast.dump``, kept on the node (a
    test's key is asked again by every site it decides, and no part of the
    analysis changes a syntax tree once it is parsed: syntax.unparse)."""
    known = expr.__dict__.get("_cslint_key")
    if known is None:
        known = expr._cslint_key = ast.dump(expr, annotate_fields=False)
    return known


def _negation(expr):
    """The key of ``not expr`` written the other way: ``x`` for ``not x``,
    ``x is not None`` for ``x is None`` (None where there is none); kept on
    the node as :func:`_key` is."""
    known = expr.__dict__.get("_cslint_negation", _UNKNOWN)
    if known is _UNKNOWN:
        known = None
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
            known = _key(expr.operand)
        elif isinstance(expr, ast.Compare) and len(expr.ops) == 1 and type(expr.ops[0]) in _NEGATED:
            known = ast.dump(ast.Compare(left=expr.left, ops=[_NEGATED[type(expr.ops[0])]()],
                                         comparators=expr.comparators), annotate_fields=False)
        expr._cslint_negation = known
    return known


_UNKNOWN = object()


def _names(expr) -> set:
    return {node.id for node in walked(expr) if isinstance(node, ast.Name)}


def _stored(owner) -> set:
    return {node.id for node in walked(owner)
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del))}


def _declared(info) -> set:
    """The names that may not be the function's own locals: those it (or a
    function nested in it) declares ``global`` or ``nonlocal``, and those it
    neither takes as a parameter nor binds (a module's name, which a call
    may rebind)."""
    func = info.func
    params = info.param_names
    read = {node.id for node in walked(func) if isinstance(node, ast.Name)}
    return ({name for node in walked(func) if isinstance(node, (ast.Global, ast.Nonlocal))
             for name in node.names}
            | (read - params - _stored(func)))


def _bound_once(info) -> set:
    """The names the function binds at most once, outside any loop (a
    parameter counts as a binding): every read after the binding sees it."""
    counts = dict.fromkeys(info.param_names, 1)
    looped = set()
    for node in walked(info.func):
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While, ast.comprehension)):
            looped |= _stored(node)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            counts[node.id] = counts.get(node.id, 0) + 1
    return {name for name, n in counts.items() if n <= 1 and name not in looped}


def held_where(test, truth: bool) -> dict:
    """{key of a plain part of ``test``: (that part, the truth it has)}
    wherever ``test`` came out ``truth``: each conjunct of a true ``and``,
    each disjunct of a false ``or``, the operand of a ``not`` the other way.
    A later test of one of them reads the value this one read only where
    :func:`reads_fixed_names` holds of them."""
    found: dict = {}
    _held(test, truth, found)
    return found


def reads_fixed_names(info, held: dict) -> bool:
    """Whether the parts ``held`` (:func:`held_where`) read only the
    function's own names, bound once outside any loop, never declared
    ``global`` or ``nonlocal``, each to a truth value, a number or a string
    (:func:`_scalar_names`): a later test of one of them reads the value an
    earlier one read."""
    names = set().union(*(_names(part) for part, _truth in held.values()))
    facts = info.name_facts
    if "once" not in facts:
        facts["once"] = _bound_once(info)
    if not names <= facts["once"]:
        return False
    if "declared" not in facts:
        facts["declared"] = _declared(info)
    if names & facts["declared"]:
        return False
    if "scalar" not in facts:
        facts["scalar"] = _scalar_names(info)
    return names <= facts["scalar"]


#: calls whose result is a truth value, a number or a string
_SCALAR_CALLS = frozenset({"all", "any", "bool", "len", "isinstance", "hasattr", "callable", "int", "float", "str"})

#: parameter annotations naming such a value
_SCALAR_TYPES = frozenset({"bool", "int", "float", "str"})


def _scalar_names(info) -> set:
    """The names bound (by a plain assignment, or as a parameter annotated
    so) to a truth value, a number or a string: a comparison, ``not x``, a
    constant, ``all(...)``, ``len(...)``.  Nothing done to another object
    changes what such a value tests as, as it may a list's."""
    out = {name for name, text in info.annotations.items() if text in _SCALAR_TYPES}
    for node in walked(info.func):
        if type(node) is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name:
            value = node.value
            kind = type(value)
            if kind is ast.Compare or kind is ast.Constant or (kind is ast.UnaryOp and type(value.op) is ast.Not) \
                    or (kind is ast.Call and type(value.func) is ast.Name and value.func.id in _SCALAR_CALLS):
                out.add(node.targets[0].id)
    return out


def _identity_test(expr) -> bool:
    """``x is None``, ``x is not y``: what nothing done to the object changes."""
    if type(expr) is ast.UnaryOp and type(expr.op) is ast.Not:
        return _identity_test(expr.operand)
    return type(expr) is ast.Compare and all(type(op) in (ast.Is, ast.IsNot) for op in expr.ops)


def _only_tested(info) -> set:
    """The names every read of which in the function is an operand of a
    comparison or of ``not``, or a test (of an ``if``, ``while``, ``assert``,
    a conditional expression, through ``and``/``or``): never a method's
    receiver, an argument, nor bound to another name, so nothing the
    function does changes the object between two tests of it."""
    read, handed = set(), set()
    stack = [(info.func, False)]
    while stack:
        node, testing = stack.pop()
        kind = type(node)
        if kind is ast.Name:
            if type(node.ctx) is ast.Load:
                read.add(node.id)
                if not testing:
                    handed.add(node.id)
            continue
        tests = _TEST_FIELDS.get(kind)
        for child in iter_children(node):
            if kind is ast.Compare or (kind is ast.UnaryOp and type(node.op) is ast.Not):
                stack.append((child, True))
            elif kind is ast.BoolOp:
                stack.append((child, testing))
            else:
                stack.append((child, tests is not None and child is getattr(node, tests)))
    return read - handed


#: the field of a statement or expression that it tests
_TEST_FIELDS = {ast.If: "test", ast.While: "test", ast.IfExp: "test", ast.Assert: "test"}


def _held(test, truth: bool, found: dict) -> None:
    kind = type(test)
    if kind is ast.BoolOp and type(test.op) is (ast.And if truth else ast.Or):
        for value in test.values:
            _held(value, truth, found)
    elif kind is ast.UnaryOp and type(test.op) is ast.Not:
        _held(test.operand, not truth, found)
    elif _plain(test):
        found[_key(test)] = (test, truth)


def decided_by(test, held: dict):
    """The truth of ``test`` where the parts of :func:`held_where`'s answer
    ``held`` have theirs (None where they do not decide it)."""
    found = held.get(_key(test))
    if found is not None:
        return found[1]
    kind = type(test)
    if kind is ast.UnaryOp and type(test.op) is ast.Not:
        inner = decided_by(test.operand, held)
        return None if inner is None else not inner
    if kind is ast.BoolOp:
        values = [decided_by(value, held) for value in test.values]
        short = type(test.op) is ast.Or  # the value that decides the whole
        if short in values:
            return short
        if all(value is (not short) for value in values):
            return not short
    negated = _negation(test)
    if negated is not None and negated in held:
        return not held[negated][1]
    return None


def deciding(info, stmt, nodes, closures) -> list:
    """The decisions ``(node, label)`` of ``closures`` that decide the site
    at ``stmt``: none labelled ``never``, none :func:`contradicted`, none that skips only this rank's own
    pass of a loop over every rank of a group (:func:`~cslint.analysis.membership.skips_own_pass`)."""
    closures = [(d, label) for d, label in closures
                if not (nodes[d].kind == cfgmod.TEST and skips_own_pass(nodes[d].stmt, info.parents,
                                                                        info.ctx.size_reads))]
    if len(closures) < 2:
        return [(d, label) for d, label in closures if label != "never"]
    dropped = contradicted(info, stmt, nodes, closures)
    return [(d, label) for d, label in closures
            if label != "never" and not (dropped and id(nodes[d].stmt) in dropped)]


#: where a site lies of an ``if`` deciding it: in its body, in its ``else``, past it (an early exit)
_BODY, _ORELSE, _PAST = "body", "orelse", "past"


def contradicted(info, stmt, nodes, closures) -> set:
    """The ids of the ``if`` statements among the tests of ``closures`` (the
    decisions of the site at ``stmt``, over the CFG's ``nodes``) on whose
    false side the site lies (its ``else``, or after the statement for an
    early exit) and which a test on whose true side it lies contradicts."""
    tests = [nodes[d].stmt for d, _label in closures if nodes[d].kind == cfgmod.TEST]
    if len(tests) < 2:
        return set()
    below = {}  # id(ancestor of the site) -> its child on the way down to the site
    child, parent = stmt, info.parents.get(id(stmt))
    while parent is not None:
        below[id(parent)] = child
        child, parent = parent, info.parents.get(id(parent))
    arms = []  # (if statement, where the site lies: _BODY, _ORELSE or _PAST)
    for test in tests:
        if type(test) is ast.If and test is not stmt:
            inner = below.get(id(test))
            arms.append((test, _PAST if inner is None else _BODY if any(s is inner for s in test.body) else _ORELSE))
    sides = {side for _, side in arms}
    if len(arms) < 2 or not ((_BODY in sides and sides != {_BODY}) or {_ORELSE, _PAST} <= sides):
        return set()
    facts = info.name_facts
    names_of = {}
    for test, _side in arms:
        found = names_of[id(test)] = facts.get(id(test.test))
        if found is None:
            names_of[id(test)] = facts[id(test.test)] = _names(test.test)

    def shared(providers, ruled_out) -> bool:
        held = set().union(*(names_of[id(test)] for test, side in arms if side in providers))
        return any(names_of[id(test)] & held for test, side in arms if side in ruled_out)

    if not (shared((_BODY,), (_ORELSE, _PAST)) or shared((_ORELSE,), (_PAST,))):
        return set()  # (the cheap part: no name read on both sides)
    known = {}  # key of a conjunct that holds at the site -> (it, its if statement)
    for test, side in arms:
        if side == _BODY:
            for conj in _conjuncts(test.test):
                if _plain(conj):
                    known.setdefault(_key(conj), (conj, test))
    # what the false test of an ``if`` whose ``else`` holds the site says there
    # (``if not sharded: ... else: <site>``: ``sharded`` holds), which rules out
    # only an early exit before it: such a test is left out of the site's
    # conditions by a test on whose true side the site lies alone, so no two
    # tests can leave each other out
    known_else = {}  # key of a plain part -> (its truth at the site, its if statement)
    for test, side in arms:
        if side == _ORELSE:
            for key, (_part, truth) in held_where(test.test, False).items():
                known_else.setdefault(key, (truth, test))
    dropped = set()
    for test, side in arms:
        if side == _BODY:
            continue
        for conj in _conjuncts(test.test):
            if not _plain(conj):
                continue
            hit = known.get(_negation(conj) or "")
            if hit is None:
                # ``not x`` known at the site contradicts the conjunct ``x``
                hit = next((h for h in known.values() if _negation(h[0]) == _key(conj)), None)
            if hit is None and side == _PAST:
                # the conjunct false at the site, or its negation true there
                hit = next((h for key, truth in ((_key(conj), False), (_negation(conj), True))
                            for h in (known_else.get(key or ""),) if h is not None and h[0] is truth), None)
            if hit is None:
                continue
            other, names = hit[1], _names(conj)
            if "declared" not in facts:
                facts["declared"] = _declared(info)
            if names & facts["declared"]:
                continue
            if not _identity_test(conj):
                if "unchanging" not in facts:
                    if "scalar" not in facts:
                        facts["scalar"] = _scalar_names(info)
                    facts["unchanging"] = facts["scalar"] | _only_tested(info)
                if not names <= facts["unchanging"]:
                    continue  # a list appended to between the tests (``xs.append(x)``) tests true at the second
            if info.inside(other, test) or info.inside(test, other):
                outer = test if info.inside(other, test) else other
                stored = facts.get(id(outer))
                if stored is None:
                    stored = facts[id(outer)] = _stored(outer)
                if names & stored:
                    continue
            else:
                if "once" not in facts:
                    facts["once"] = _bound_once(info)
                if not names <= facts["once"]:
                    continue
            dropped.add(id(test))
            break
    return dropped
