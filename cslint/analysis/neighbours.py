"""Exchanges between neighbouring pipeline stages, each under the test that
the neighbour is there::

    if not is_last_stage():
        p2p.send(x, next_stage)      # stage s, over the group {s, s + 1}
    if not is_first_stage():
        p2p.recv(x, prev_stage)      # stage s + 1, over the same group

A framework may run such an exchange as a collective over the two ranks of
the pair of stages alone (the presets' ``pair_exchanges``: DeepSpeed's
pipeline broadcasts from the sender over the pair's group).  The stage test
differs along the pipeline, but not over the pair: of the group {s, s + 1},
stage s enters it by its send to the stage after it, which it makes exactly
where it is not the last stage -- where that group is there at all -- and
stage s + 1 by its receive from the stage before it, which it makes exactly
where it is not the first.  Each member's test holds wherever the pair group
has it as that member, so no member enters the pair's collective alone.

This module reads the syntax: whether a call is such an exchange with the
stage before or after this one, and the ``if`` that lets it run exactly
where that neighbour is there (:class:`~cslint.analysis.records.NeighbourExchange`,
``Site.neighbour``).  Whether the function holds the other half, a receive
from the stage before for a send to the stage after, is the decision's
question (``hazards._neighbours_meet``).
"""

from __future__ import annotations

import ast
from typing import Optional

from ..model import Span
from ..presets.rank_names import pipeline_end
from .records import NeighbourExchange
from .relays import is_not_first_stage, names_neighbour
from .syntax import dotted

#: the end of the pipeline whose stage has no neighbour on that side
_END_WITHOUT = {"next": "last", "previous": "first"}


def neighbour_exchange(info, call: ast.Call, stmt: ast.stmt, spec: tuple) -> Optional[NeighbourExchange]:
    """The exchange ``call`` (of a pair exchange the presets describe as
    ``spec``: direction, peer position, peer keyword) makes with this stage's
    neighbour, where an ``if`` around ``stmt`` (the call's statement) lets it
    run exactly where that neighbour is there: in the body of ``if not
    is_last_stage():`` or the ``else`` of ``if is_last_stage():`` for the
    stage after; ``if not is_first_stage():`` (``pp_rank > 0``) for the one
    before.  None for anything else."""
    direction, position, keyword = spec
    peer = _peer(call, position, keyword)
    if peer is None:
        return None
    sides = [side for side in ("next", "previous") if names_neighbour(peer, side)]
    if len(sides) != 1:
        return None
    side = sides[0]
    end = _END_WITHOUT[side]
    parents, blocks = info.parents, info.blocks
    child, parent = stmt, parents.get(id(stmt))
    while parent is not None:
        if type(parent) is ast.If:
            tested = stage_end_test(parent.test)
            if tested is not None and tested[0] == end:
                in_body = blocks.get(id(child)) is parent.body
                if in_body != tested[1]:
                    return NeighbourExchange(direction, side, Span.of(parent))
        child, parent = parent, parents.get(id(parent))
    return None


def stage_end_test(test: ast.expr) -> Optional[tuple]:
    """``(end, holds)`` of a test of whether this rank runs the pipeline's
    ``first`` or ``last`` stage: ``is_last_stage()`` (a name or a call with
    no arguments) holds there, ``not is_last_stage()`` and ``pp_rank > 0``
    do not; None for any other test."""
    if type(test) is ast.UnaryOp and isinstance(test.op, ast.Not):
        inner = stage_end_test(test.operand)
        return (inner[0], not inner[1]) if inner is not None else None
    if type(test) is ast.Call:
        if test.args or test.keywords:
            return None
        test = test.func
    if type(test) in (ast.Name, ast.Attribute):
        end = pipeline_end((dotted(test) or "").rsplit(".", 1)[-1])
        return (end, True) if end is not None else None
    if is_not_first_stage(test):
        return ("first", False)
    return None


def _peer(call: ast.Call, position: int, keyword: str) -> Optional[ast.expr]:
    for kw in call.keywords:
        if kw.arg == keyword:
            return kw.value
    if any(type(arg) is ast.Starred for arg in call.args[:position + 1]):
        return None
    return call.args[position] if len(call.args) > position else None
