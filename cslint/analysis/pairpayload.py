"""The structure of what a pair of pipeline stages exchanges, agreed by the
pair::

    def send_activations(self):                  # stage s
        if isinstance(outputs, torch.Tensor):
            p2p.send(outputs, self.next_stage)
        else:
            for part in outputs:
                p2p.send(part, self.next_stage)

    def recv_activations(self):                  # stage s + 1
        if isinstance(self.recv_buf, torch.Tensor):
            p2p.recv(self.recv_buf, self.prev_stage)
        else:
            for part in self.recv_buf:
                p2p.recv(part, self.prev_stage)

An exchange of the presets' ``pair_exchanges`` is one collective of the two
ranks of a pair of stages (``neighbours.py``): it moves the sender's tensor
into the receiver's buffer of that tensor's shape, so the two ends hold what
is one value's structure -- the receiver built its buffers from what the
sender told it first, or from its own outputs, which the sender received as
its inputs.  A test of the exchanged value's structure (its kind:
``isinstance``, ``torch.is_tensor``, ``x.is_floating_point()``; the number
of its parts: a loop over the container whose parts are exchanged one each)
then goes the same way at both ends of the pair, even where the value came
from stage-dependent code: the stage decides what every member of the pair
holds alike.  So such a test parts no member of the pair's group where the
class (or module) also makes the other half, a receive from the stage
before for a send to the stage after and the other way round, under a test
of the same kind of its own exchanged value.

Counting is agreed only where both ends count by the structure: an end that
exchanges fixed elements (``send(parts[0])``, ``send(parts[1])``) under its
type test meets a loop over the other end's container only if that container
has exactly so many parts, which nothing here gives; a loop then stays
reported.

This module reads the syntax; the decision (``hazards._site_hazard``) asks
``Site.agreed_structure`` for the tests it leaves out.
"""

from __future__ import annotations

import ast
from typing import NamedTuple, Optional

from ..model import Span
from .relays import names_neighbour
from .scope import canonical_text
from .syntax import dotted, unparse
from .vocabulary import KIND_METHODS, STRUCTURE_BUILTINS

#: the tests of an exchanged value's kind (``isinstance(x, T)``) and of the
#: number of its parts exchanged one each (a loop over them, a filter of them)
_TYPE, _COUNT = "type", "count"

#: a builtin that reads its argument's kind alone (``isinstance``, ``vocabulary.STRUCTURE_BUILTINS``)
_KIND_READ = "K--"


class ExchangeShape(NamedTuple):
    """A pair exchange as the syntax around it reads its exchanged value."""

    scope: int  # id of the class (or module) it is made in
    direction: str  # send | recv
    side: str  # next | previous
    #: ((span of the deciding statement, kind), ...): the tests of the
    #: value's structure around the call (an ``if``, a ``for``, a loop's
    #: ``continue`` exit: the statements ``Cond.guard`` names)
    tests: tuple
    #: the value is a fixed element of a container (``parts[0]``)
    fixed: bool


def agreed_structure(ctx, call: ast.Call, pair_exchanges: dict) -> frozenset:
    """The spans of the tests of ``call``'s
    exchanged value that the pair agrees on: each of a kind the other half
    of the pair's exchanges in its class also tests, counting only where no
    end of the other half exchanges a fixed element."""
    shapes = _module_shapes(ctx, pair_exchanges)
    mine = shapes.get(Span.of(call))
    if mine is None or not mine.tests:
        return frozenset()
    met, fixed = set(), False
    for other in shapes.values():
        if other.scope == mine.scope and other.direction != mine.direction and other.side != mine.side:
            kinds = {kind for _key, kind in other.tests}
            met |= kinds
            fixed = fixed or (other.fixed and _TYPE in kinds)
    return frozenset(key for key, kind in mine.tests if kind in met and not (kind == _COUNT and fixed))


def _module_shapes(ctx, pair_exchanges: dict) -> dict:
    found = ctx.__dict__.get("_pair_exchange_shapes")
    if found is None:
        found = ctx.__dict__["_pair_exchange_shapes"] = _read_module(ctx, pair_exchanges)
    return found


def _read_module(ctx, pair_exchanges: dict) -> dict:
    shapes: dict = {}

    def visit(node, scope: int, chain: tuple) -> None:
        for child in ast.iter_child_nodes(node):
            if type(child) is ast.ClassDef:
                visit(child, id(child), ())
                continue
            if type(child) is ast.Call:
                spec = pair_exchanges.get(canonical_text(dotted(child.func), ctx.imports) or "")
                if spec is not None:
                    shape = _shape(child, spec, scope, chain)
                    if shape is not None:
                        shapes[Span.of(child)] = shape
            inner = () if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) else chain
            visit(child, scope, inner + ((node, child),) if isinstance(child, ast.stmt) else inner)

    visit(ctx.tree, id(ctx.tree), ())
    return shapes


def _shape(call: ast.Call, spec: tuple, scope: int, chain: tuple) -> Optional[ExchangeShape]:
    direction, position, keyword = spec
    peer = next((kw.value for kw in call.keywords if kw.arg == keyword), None)
    if peer is None and len(call.args) > position and not any(type(a) is ast.Starred for a in call.args):
        peer = call.args[position]
    value = call.args[0] if position > 0 and call.args and type(call.args[0]) is not ast.Starred else None
    if peer is None or value is None:
        return None
    sides = [side for side in ("next", "previous") if names_neighbour(peer, side)]
    if len(sides) != 1:
        return None
    roots = _prefixes(value)
    elements, containers = set(), set()
    for parent, child in chain:  # the loops whose parts are exchanged one each
        if type(parent) in (ast.For, ast.AsyncFor) and child in parent.body:
            bound = {n.id for n in ast.walk(parent.target) if type(n) is ast.Name}
            if bound & roots:
                container = parent.iter
                if type(container) is ast.Call and dotted(container.func) == "enumerate" and container.args:
                    container = container.args[0]
                elements |= bound & roots
                containers |= _prefixes(container)
    tests = []
    for parent, child in chain:
        if type(parent) is ast.If and (child in parent.body or child in parent.orelse):
            subject = _tested(parent.test)
            if subject in elements:
                tests.append((Span.of(parent), _COUNT))
            elif subject in roots or subject in containers:
                tests.append((Span.of(parent), _TYPE))
        elif type(parent) in (ast.For, ast.AsyncFor) and child in parent.body:
            if {n.id for n in ast.walk(parent.target) if type(n) is ast.Name} & elements:
                tests.append((Span.of(parent), _COUNT))
                tests.extend(_filters(parent, call, elements))
    fixed = type(value) is ast.Subscript and type(value.slice) is ast.Constant
    return ExchangeShape(scope, direction, sides[0], tuple(tests), fixed)


def _filters(loop, call: ast.Call, elements: set) -> list:
    """The ``if <test of an exchanged part>: ... continue`` statements of
    ``loop``'s body before ``call``: a filter of the parts (an early exit
    whose ``Cond.guard`` is the ``continue``)."""
    found = []
    for stmt in loop.body:
        if stmt.lineno >= call.lineno:
            break
        if type(stmt) is ast.If and _tested(stmt.test) in elements:
            exit_stmt = next((s for s in stmt.body if type(s) is ast.Continue), None)
            if exit_stmt is not None:
                found.append((Span.of(exit_stmt), _COUNT))
    return found


def _tested(test: ast.expr) -> Optional[str]:
    """The text of the value whose kind ``test`` reads: ``isinstance(x, T)``,
    ``x.is_floating_point()``, ``torch.is_tensor(x)``, their negations; None
    for any other test."""
    while type(test) is ast.UnaryOp and isinstance(test.op, ast.Not):
        test = test.operand
    if type(test) is not ast.Call:
        return None
    func = test.func
    if type(func) is ast.Name and STRUCTURE_BUILTINS.get(func.id) == _KIND_READ and test.args:
        return unparse(test.args[0])
    if type(func) is ast.Attribute and func.attr in KIND_METHODS:
        if not test.args and not test.keywords:
            return unparse(func.value)  # ``x.is_floating_point()``
        return unparse(test.args[0]) if len(test.args) == 1 else None  # ``torch.is_tensor(x)``
    return None


def _prefixes(value: ast.expr) -> set:
    """The texts of ``value`` and of what it is read from (``x.grad``,
    ``x[0]``: ``x``), short of ``self`` alone."""
    found = set()
    while True:
        if type(value) is ast.Name:
            if value.id != "self":
                found.add(value.id)
            return found
        if type(value) not in (ast.Attribute, ast.Subscript):
            return found
        found.add(unparse(value))
        value = value.value
