"""A failure an event loop retries before the iteration communicates.

A server loop often receives its next piece of work on one rank, hands it
to the others, and counts its failures::

    while self.running:
        try:
            frames = self.receive()        # the source reads a socket, then broadcasts
            self.handle(frames)            # every rank works on what was broadcast
            self.errors = 0
        except Exception:
            self.errors += 1
            log(...)
            if self.errors >= self.max_errors:
                raise

Where ``receive`` fails on one rank before it has issued anything, that
rank issues nothing in this iteration and goes back to the same receive,
while its peers wait in the iteration's first collective: they meet there
when the retry gets through, in the same order as without the failure.  A
failure that keeps coming back ends the job through the handler's bounded
count (a re-raise past a limit), never a rank looping alone for good.  So
the exception decides no collective's pairing, where all of this holds
(:func:`retry_facts` works out the shape, the whole-tree pass the
collectives: ``hazards._retried_quietly``):

* the ``try`` whose body holds the failing statement has a handler that
  catches everything, is the last statement of a ``while`` loop's body, and
  every handler that does not end the process (``exits.handler_swallows``)
  counts up a value and raises once a test of it holds, and neither returns
  nor breaks: each way out of it goes back to the loop's test;
* nothing in the loop's body leaves it, and its test reads nothing the
  body stores into or calls a method of: the retry leaves the test as it
  was, and the rank runs the iterations the others run (a loop left on a
  value the failed attempt consumed would not);
* what a rank runs in the iteration before the failing statement (the
  paths through the earlier statements that reach it, the tests and context
  managers around it, the loop's test), what the handlers and the
  ``finally`` run, issue no collective (``quiet``);
* the failing statement's own calls (``own``) issue none either, or each
  one's callee communicates only in its last statement, a ``return`` (or an
  expression) of one call that fails on no rank alone
  (``Variant.tail``): whatever fails in it fails before the callee
  communicates.

An ``if`` with no exit of its own (no ``return``, ``break``...) skips a
site after it only through its arms' failures: where each of those is
retried so, the ``if`` decides nothing either
(``ExceptionGuards._arms_retry``).

A handler that breaks out, returns, or swallows failures without a bound
leaves the peers waiting in the collective (a rank that fails for good
retries alone forever), and a failure after a collective of the iteration
has that rank issue it twice: those stay reported.
"""

from __future__ import annotations

import ast
from typing import Optional

from . import cfg as cfgmod
from .exits import always_raises, catches_everything, handler_swallows
from .astwalk import BLOCKS_OF, DEFINITIONS, LOOPS, walked
from .bindings import flatten_targets
from .syntax import ReadNames, plain_dotted

#: compound statements a failing statement may sit in on its way up to the loop, and what of them runs first
_HEADS = {ast.If: lambda s: (s.test,), ast.With: lambda s: tuple(i.context_expr for i in s.items),
          ast.AsyncWith: lambda s: tuple(i.context_expr for i in s.items)}


def retry_facts(info, alternatives, raising) -> Optional[tuple]:
    """``(quiet, own)`` site indices where the exception of ``raising`` (a
    statement of a ``try`` body) is retried by the ``while`` loop around it
    as the module docstring says; None where the shape does not hold."""
    own = _own_sites(alternatives, raising)
    if own is None:
        return None
    quiet: list = []
    handled_by = None
    node = raising
    while True:
        parent = info.parents.get(id(node))
        kind = type(parent)
        if kind is ast.While:
            if handled_by is None or node is not handled_by or parent.body[-1] is not node \
                    or not _left_only_by_its_test(parent):
                return None
            quiet += alternatives.sites_in([parent.test])
            break
        if kind is ast.Try:
            if not any(child is node for child in parent.body):
                return None  # in a handler, an ``else`` or a ``finally``: not what the handlers catch
            if handled_by is None:
                if not _retries(parent):
                    return None
                handled_by = parent
                quiet += alternatives.sites_in(parent.finalbody)
                for handler in parent.handlers:
                    quiet += alternatives.sites_in(handler.body)
        elif kind in _HEADS:
            quiet += alternatives.sites_in(list(_HEADS[kind](parent)))
        else:
            return None  # a ``for`` loop, a ``match``, the function itself
        earlier = _earlier(info, node)
        if earlier is None:
            return None
        paths = alternatives.block_paths(earlier)
        if paths is None:
            return None
        for sequence, left in paths:
            if not left:  # a path that leaves the block never reaches the failing statement
                quiet += sequence
        node = parent
    return tuple(dict.fromkeys(quiet)), own


def _own_sites(alternatives, raising) -> Optional[tuple]:
    kind = type(raising)
    if kind in _HEADS:
        return alternatives.sites_in(list(_HEADS[kind](raising)))
    if isinstance(raising, cfgmod.COMPOUND_STATEMENTS):
        return None
    return alternatives.sites_in([raising])


def _earlier(info, node) -> Optional[list]:
    block = info.blocks.get(id(node))
    if block is None:
        return None
    for i, child in enumerate(block):
        if child is node:
            return block[:i]
    return None


def _retries(try_stmt: ast.Try) -> bool:
    """Whether a handler of ``try_stmt`` catches everything and every handler
    that does not end the process goes back round the loop within a bound."""
    if not any(catches_everything(h) for h in try_stmt.handlers):
        return False
    return all(_bounded_retry(h) for h in try_stmt.handlers if handler_swallows(h))


def _bounded_retry(handler: ast.ExceptHandler) -> bool:
    """No ``return``/``break`` in the handler, and a test of its own top
    level that reads what the handler counts up raises in its arm."""
    if any(type(node) in (ast.Return, ast.Break) for node in walked(handler)):
        return False
    counted = {plain_dotted(s.target) for s in handler.body if type(s) is ast.AugAssign} - {None}
    reads = ReadNames()
    return any(type(s) is ast.If and always_raises(s.body, frozenset())
               and counted & reads.names_read(s.test) for s in handler.body)


def _left_only_by_its_test(loop: ast.While) -> bool:
    """Whether nothing in the loop's body leaves it (a ``return``, a ``break``
    of its own) and its test reads nothing the body stores into (the value
    it reads, one it reads through, or a part of it) or calls a method of.
    A rank that retries then runs the same iterations as without the
    failure: a loop left on a value the attempt consumed (``if item is None:
    break`` past ``item = q.get()``) would have it leave one collective
    early."""
    if _leaves(loop.body):
        return False
    read = _chains(loop.test)
    if not read:
        return True

    def touches(text, inside_only: bool) -> bool:
        return text is not None and any(text == c or text.startswith(c + ".")
                                        or (not inside_only and c.startswith(text + ".")) for c in read)

    for node in walked(loop):
        kind = type(node)
        if kind is ast.Assign:
            targets = node.targets
        elif kind is ast.AugAssign or kind is ast.AnnAssign or kind is ast.NamedExpr:
            targets = [node.target]
        elif kind is ast.Call and type(node.func) is ast.Attribute:
            if touches(plain_dotted(node.func.value), True):
                return False
            continue
        else:
            continue
        for target in targets:
            for part in flatten_targets(target):
                while type(part) is ast.Subscript:
                    part = part.value
                if touches(plain_dotted(part), False):
                    return False
    return True


def _leaves(stmts) -> bool:
    """A ``return`` anywhere in ``stmts``, or a ``break`` outside the loops
    nested in them (a nested definition's own statements leave nothing)."""
    stack = [(stmt, False) for stmt in stmts]  # (statement, inside a loop nested in stmts)
    while stack:
        stmt, nested = stack.pop()
        t = type(stmt)
        if t is ast.Return or (t is ast.Break and not nested):
            return True
        if t in DEFINITIONS:
            continue
        for field in BLOCKS_OF[t]:
            inner = getattr(stmt, field, None)
            if inner:
                inside = nested or (field == "body" and t in LOOPS)  # (a loop's ``else`` is not its own)
                stack.extend((part, inside) for part in inner)
    return False


def _chains(expr) -> frozenset:
    """The whole dotted names an expression reads (``self.state.running``, not ``self``)."""
    inner = {id(node.value) for node in walked(expr) if type(node) is ast.Attribute}
    return frozenset(plain_dotted(node) for node in walked(expr)
                     if type(node) in (ast.Name, ast.Attribute) and id(node) not in inner) - {None}


def retried_in_step(info, variant, cond, group: str, mode: frozenset) -> bool:
    """Whether ``cond``, an exception an unbounded loop retries (``Cond.retry``),
    leaves the failing rank in step with its peers over ``group``: nothing it
    runs before the failure, in the handlers or in the ``finally`` issues a
    collective, and the failing statement's calls that reach one fail only
    before they communicate (``Variant.tail``)."""
    if cond.retry is None:
        return False
    quiet, own = cond.retry
    if info.sequence(variant, quiet, mode):
        return False
    program = info.program
    span = info.knowledge.world.span(group)
    for index in own:
        site = variant.sites[index]
        if not info.sequence(variant, (index,), mode):
            continue
        if site.collective is not None or site.ref is None:
            return False  # the failing statement is a collective itself, or a call nothing resolves
        targets = program.resolver.resolve(site.ref)
        if not targets:
            return False
        for target in targets:
            callee = program.variant(target, mode)
            if callee is None or callee.tail is None:
                return False
            tail_sites, tail_raised = callee.tail
            before = tuple(i for i in range(len(callee.sites)) if i not in tail_sites)
            if info.sequence(callee, before, mode):
                return False
            value = program.concrete(program.eval(tail_raised, mode), target, mode) if tail_raised else {}
            if any(origin.tag == "S" and dims & span for origin, (dims, _via) in value.items()):
                return False
    return True
