"""Tests that rule each other out (issue 14 §2.6, complementary tests in one
function): a name bound in the arm of one ``if`` is not what a later ``if``
of the same block reads where its test says the first arm was not taken::

    outputs = self.module(inputs)
    if self.partitioned and not self.is_last_stage():
        outputs = (part.to_meta(), part.data())   # this rank's slice
    buffers[i] = outputs
    if self.is_last_stage():
        self.loss = outputs                      # the module's output alone

The second test holds only where ``self.is_last_stage()`` is true, so the
first test's conjunct ``not self.is_last_stage()`` was false: no rank
reading ``outputs`` in the second arm ran the first arm, and ``outputs``
holds there what it held before the first ``if`` (:func:`excluded_edges`,
applied by :class:`~cslint.analysis.edges.Refinements` on the edges into
the second arm).  The dataflow otherwise joins both bindings there, and the
first arm's rank-local value decides the second arm's reads.

Two tests rule each other out where a conjunct of the later one is the
negation of a conjunct of the earlier one (``x`` and ``not x``, ``a is
None`` and ``a is not None``, ``==`` and ``!=``), and that conjunct reads
the same value at both:

- a process's fixed identity, as the loaded presets know it (their
  sources of :data:`FIXED_KINDS`): a call with no arguments
  (``dist.get_rank()``, a pipeline engine's ``is_last_stage()``), an
  attribute (``get_pp_group().is_last_rank``), or a comparison of such with
  a constant (``self.stage_id == 0``), with no call between the two ``if``
  statements nor before the conjunct in the later test, and no store to
  that attribute in the earlier arm or between (the premise: what a rank
  is does not change while one function runs, unless something it calls in
  between changes it -- a virtual pipeline stage moved by a call);
- or local names only (:func:`~cslint.analysis.correlated.reads_fixed_names`:
  bound once, outside loops, to a truth value, a number or a string).

The names restored are those the earlier arm binds, each a plain local
name that no statement between the two tests (nor either test, nor the
later arm) binds, stores into or reads an attribute of, and that the function never stores elements into or reads by
constant key (those keep parts of their own in the dataflow); the earlier
``if`` has no ``else`` (whose bindings the later arm would read)."""

from __future__ import annotations

import ast
from typing import Optional

from ..presets import KIND_RANK_ID
from . import cfg as cfgmod
from .astwalk import DEFINITIONS, holds_kind, imported_names, walk as fast_walk, walked
from .atoms import EMPTY
from .correlated import held_where, reads_fixed_names
from .scope import UNIFORM_TEXT, canonical_text
from .syntax import dotted

_CALLS = frozenset({ast.Call})

#: source kinds that name what a process is, which no test of one function sees change
FIXED_KINDS = frozenset({KIND_RANK_ID, "pipeline stage"})

#: a negated comparison -> the comparison it negates
_POSITIVE = {ast.IsNot: ast.Is, ast.NotEq: ast.Eq, ast.NotIn: ast.In}


def _conjuncts(test) -> list:
    if type(test) is ast.BoolOp and type(test.op) is ast.And:
        out = []
        for value in test.values:
            out.extend(_conjuncts(value))
        return out
    return [test]


def _operand(node) -> Optional[str]:
    """The text of a name, a dotted attribute, a call with no arguments of
    one (``get_pp_group().is_last_rank``) or a constant."""
    if type(node) is ast.Constant:
        return repr(node.value)
    text = dotted(node)
    if text is None or "(" in text and any(type(sub) is ast.Call and (sub.args or sub.keywords)
                                           for sub in fast_walk(node)):
        return None
    return text


def _positive(expr) -> tuple:
    """(key of the part ``expr`` tests, whether ``expr`` holds where that
    part is true): ``not x`` -> (x, False), ``a is not None`` -> (``a is
    None``, False); the key is None for a part of any other form than a
    name, a call with no arguments of a dotted name, or a comparison of
    names, dotted attributes and constants."""
    kind = type(expr)
    if kind is ast.UnaryOp and type(expr.op) is ast.Not:
        key, truth = _positive(expr.operand)
        return key, not truth
    if kind is ast.Name or kind is ast.Attribute or kind is ast.Call:
        text = _operand(expr)
        return (None if text is None else ("part", text)), True
    if kind is ast.Compare and len(expr.ops) == 1:
        left, right = _operand(expr.left), _operand(expr.comparators[0])
        if left is None or right is None:
            return None, True
        op = type(expr.ops[0])
        positive = _POSITIVE.get(op, op)
        return ("compare", left, positive.__name__, right), positive is op
    return None, True


def _tested(expr):
    """The part ``expr`` tests (``x`` of ``not x``)."""
    while type(expr) is ast.UnaryOp and type(expr.op) is ast.Not:
        expr = expr.operand
    return expr


def _calls(nodes) -> bool:
    for node in nodes:
        if holds_kind(node, _CALLS):
            return True
    return False


def _fixed_identity(read, info) -> bool:
    """Whether the presets know ``read`` as a process's fixed identity
    (:data:`FIXED_KINDS`), by its text alone (nothing is evaluated): a
    source call, a rank getter by its name, a source attribute or a rank
    relative to its group (``get_pp_group().is_last_rank``)."""
    ctx = info.ctx
    if type(read) is ast.Call:
        raw = dotted(read.func)
        if not raw or "()" in raw:
            return False
        configured, source, by_name = ctx.call_text_verdicts(raw, canonical_text(raw, ctx.imports),
                                                             info.normalise_self(raw))
        if configured is not None:
            return False
        return source[0] in FIXED_KINDS if source is not None else by_name is not None and by_name != "uniform"
    if type(read) is ast.Attribute:
        text = dotted(read)
        if not text:
            return False
        verdict = ctx.attribute_text_verdict(text, info.normalise_self(text), read.attr)
        return verdict is not None and verdict is not UNIFORM_TEXT and verdict[0] in FIXED_KINDS
    return False


def _identity_reads(part) -> list:
    """What ``part`` reads that may be a process's identity: the part
    itself (a call, an attribute), or a comparison's operands that are not
    constants; nothing for a plain name."""
    kind = type(part)
    if kind is ast.Call or kind is ast.Attribute:
        return [part]
    if kind is ast.Compare:
        reads = [operand for operand in (part.left, part.comparators[0]) if type(operand) is not ast.Constant]
        return [] if all(type(read) is ast.Name for read in reads) else reads
    return []


def _stores_attribute(stmts, texts: set) -> bool:
    return any(type(sub) is ast.Attribute and type(sub.ctx) is not ast.Load and dotted(sub) in texts
               for stmt in stmts for sub in fast_walk(stmt))


def _signature(test) -> dict:
    """{key of a part one of ``test``'s conjuncts tests: whether the
    conjunct holds where that part is true} (the first conjunct of each)."""
    out: dict = {}
    for conj in _conjuncts(test):
        key, truth = _positive(conj)
        if key is not None:
            out.setdefault(key, (conj, truth))
    return out


def _negated_conjunct(test) -> bool:
    """Whether a conjunct of ``test`` is negated (``not x``, ``is not``,
    ``!=``, ``not in``): of two tests that rule each other out, one is."""
    for conj in _conjuncts(test):
        kind = type(conj)
        if kind is ast.UnaryOp and type(conj.op) is ast.Not:
            return True
        if kind is ast.Compare and len(conj.ops) == 1 and type(conj.ops[0]) in _POSITIVE:
            return True
    return False


def _ruled_out(first: ast.If, earlier: dict, second: ast.If, later: dict, between: list, info) -> bool:
    """Whether ``second``'s test holds only where the earlier test (its
    :func:`_signature` ``earlier``) did not."""
    conjuncts = _conjuncts(second.test)
    for key, (conj, truth) in later.items():
        found = earlier.get(key)
        if found is None or found[1] == truth:
            continue
        part = _tested(conj)
        reads = _identity_reads(part)
        if reads:
            index = next(i for i, c in enumerate(conjuncts) if c is conj)
            if all(_fixed_identity(read, info) for read in reads) and not _calls(between) \
                    and not _calls(conjuncts[:index]) \
                    and not _stores_attribute([*first.body, *between], {dotted(read) for read in reads}):
                return True
        else:
            held = held_where(found[0], True)
            if held and reads_fixed_names(info, held):
                return True
    return False


def _bound(stmts) -> Optional[set]:
    """The local names ``stmts`` bind (None where one is declared global or
    nonlocal, or a definition binds one)."""
    out = set()
    for stmt in stmts:
        for sub in fast_walk(stmt):
            kind = type(sub)
            if kind is ast.Name and type(sub.ctx) is not ast.Load:
                out.add(sub.id)
            elif kind in (ast.Global, ast.Nonlocal) or kind in DEFINITIONS:
                return None
    return out


def _touched(stmts) -> set:
    """The names ``stmts`` (statements or expressions) bind, delete, store
    into, read an attribute of or call a method on (:func:`_rebound`, plus
    receivers and every name a nested definition mentions)."""
    out = _rebound(stmts)
    for stmt in stmts:
        for sub in walked(stmt):
            kind = type(sub)
            if kind in (ast.Attribute, ast.Subscript) and type(sub.value) is ast.Name \
                    and (type(sub.ctx) is not ast.Load or kind is ast.Attribute):
                out.add(sub.value.id)
            elif kind in DEFINITIONS:
                out.update(node.id for node in walked(sub) if type(node) is ast.Name)
    return out


def _rebound(stmts) -> set:
    """Every name ``stmts`` may bind: their own bindings, the names a
    function or class defined in them binds (it may declare one
    ``nonlocal``), declares or is called, imports and handlers."""
    out = set()
    for stmt in stmts:
        for sub in walked(stmt):
            kind = type(sub)
            if kind is ast.Name and type(sub.ctx) is not ast.Load:
                out.add(sub.id)
            elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef or kind is ast.ClassDef:
                out.add(sub.name)
            elif kind is ast.Import or kind is ast.ImportFrom:
                out.update(imported_names(sub))
            elif kind is ast.ExceptHandler and sub.name:
                out.add(sub.name)
            elif kind is ast.Global or kind is ast.Nonlocal:
                out.update(sub.names)
    return out


def ruled_out_in_block(block: list, info) -> dict:
    """{index of a later ``if`` of ``block``: (index of the nearest earlier
    ``if`` whose arm it rules out, the names that arm binds which keep, in
    the later arm, what they held before it)} (see the module)."""
    ifs = [(index, stmt) for index, stmt in enumerate(block) if type(stmt) is ast.If]
    if len(ifs) < 2 or not any(_negated_conjunct(stmt.test) for _index, stmt in ifs):
        return {}
    signatures = [_signature(stmt.test) for _index, stmt in ifs]
    bound: dict = {}  # index of an earlier if -> the names its arm binds, which the function keeps no parts of
    out = {}
    for j in range(1, len(ifs)):
        at, second = ifs[j]
        later = signatures[j]
        for k in range(j - 1, -1, -1):
            index, first = ifs[k]
            earlier = signatures[k]
            if first.orelse or not any(key in earlier and earlier[key][1] != truth
                                       for key, (_conj, truth) in later.items()):
                continue
            names = bound.get(index)
            if names is None:
                names = bound[index] = {name for name in _bound(first.body) or ()
                                        if name not in info.element_stores and name not in info.dict_keys}
            between = block[index + 1:at]
            rebound = _rebound(second.body)
            # a name the later arm binds again is left as it is: what reaches that binding (a receive handing
            # on the first stage's value, relays.py) reads it as the ranks that took the earlier arm hold it
            names = names - _touched([*between, first.test, second.test]) - rebound if names else names
            if names and _ruled_out(first, earlier, second, later, between, info):
                out[at] = (index, tuple(sorted(names)))
                break
    return out


def excluded_edges(dataflow) -> dict:
    """{(later test node, successor into its arm): (earlier test node, names)}
    (see the module): along that edge each name holds what it held on entry
    to the earlier test."""
    info = dataflow.info
    graph = dataflow.graph
    out = {}
    blocks = info.blocks
    found: dict = {}  # id(block) -> ruled_out_in_block
    for node in graph.nodes:
        second = node.stmt
        if node.kind != cfgmod.TEST or type(second) is not ast.If:
            continue
        block = blocks.get(id(second))
        if not block or len(block) < 2:
            continue
        pairs = found.get(id(block))
        if pairs is None:
            pairs = found[id(block)] = ruled_out_in_block(block, info)
        if not pairs:
            continue
        at = next((i for i, stmt in enumerate(block) if stmt is second), None)
        pair = pairs.get(at)
        if pair is None:
            continue
        index, names = pair
        starts = [m for m in graph.stmt_nodes.get(id(block[index]), ()) if graph.nodes[m].kind == cfgmod.TEST]
        if len(starts) != 1:
            continue
        labels: dict = {}
        for succ, label in node.succs:
            labels.setdefault(succ, set()).add(label)
        for succ, seen in labels.items():
            if seen == {True}:
                out[node.id, succ] = (starts[0], names)
    return out


class RuledOutWalk:
    """The summary walk's step over the statements of one block
    (``statement``, called as it is) for the ``if`` pairs of
    :func:`ruled_out_in_block`: it keeps what the names an earlier arm binds
    held before it, and walks the later ``if`` with them so; past it they
    hold both again (the ranks that did not take the later arm)."""

    __slots__ = ("statement", "pairs", "firsts", "held")

    def __init__(self, statement, pairs: dict, firsts: dict):
        self.statement = statement
        self.pairs = pairs  # id(later if) -> (id(earlier if), names)
        self.firsts = firsts  # id(earlier if) -> the names to keep
        self.held: dict = {}  # id(earlier if) -> {name: what it held before it}

    def __call__(self, s, env: dict, *rest):
        names = self.firsts.get(id(s))
        if names:
            self.held[id(s)] = {name: env.get(name) for name in names}
        pair = self.pairs.get(id(s))
        if pair is None or pair[0] not in self.held:
            return self.statement(s, env, *rest)
        before = self.held[pair[0]]
        joined = {}
        for name in pair[1]:
            joined[name] = env.get(name)
            env[name] = EMPTY if before[name] is None else before[name]
        exits = self.statement(s, env, *rest)
        for name, atoms in joined.items():
            if atoms is not None:
                env[name] = env.get(name, EMPTY) | atoms
        return exits


def ruled_out_walk(block: list, info, in_loop: bool, statement):
    """``statement`` (the summary walk's step over one statement), or a
    :class:`RuledOutWalk` of it where ``block`` has pairs: outside loops
    (each block walked once), a later ``if`` with no ``else`` (which reads
    both) whose test reads none of the names."""
    if in_loop or len(block) < 2:
        return statement
    pairs, firsts = {}, {}
    for at, (first, names) in ruled_out_in_block(block, info).items():
        second = block[at]
        read = {node.id for node in walked(second.test) if type(node) is ast.Name}
        if not second.orelse and not read & set(names):
            pairs[id(second)] = (id(block[first]), names)
            firsts[id(block[first])] = tuple(sorted(set(firsts.get(id(block[first]), ())) | set(names)))
    return RuledOutWalk(statement, pairs, firsts) if pairs else statement
