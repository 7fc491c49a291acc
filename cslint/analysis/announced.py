"""Decisions one rank takes alone, announced to the others (issue 14, complementary-role-arms).

A function that runs on one rank of a group alone (:attr:`Program.root_only`,
:mod:`~cslint.analysis.rootside`: rank 0's event loop over the queue only it
makes) has no two ranks of the group taking its tests: whichever way it goes,
the other ranks take their part of its collectives elsewhere, in a loop of
their own that waits on what it broadcasts.  What can still part the group
is the root issuing a collective the others do not expect there.  A decision
every way of which opens, over the group, with a call of one helper that
only broadcasts, handed a payload the code itself fixes (a constant, a
display of constants)::

    if kind == "work":
        self._announce(("work",))   # the others learn which way the root went
        self._share(job)            # and, from the payload, what follows
        self._compute(job)
    elif kind == "note":
        self._announce(("idle",))

tells the others which way the root went before anything else: their loop
takes that broadcast whichever way it is, and its payload tells them what
follows.  A way that issues nothing over the group, inside a loop, leaves
them waiting for the next announcement; a way may skip the announcement only
under a test every rank agrees on (``if is_multi_rank:``, a configuration).
A failure before the announcement sends the root on to its next one, as not
failing does.  A way that opens with another collective (the work broadcast
without its announcement), an announcement under a rank-local test, or one
whose payload the message decides is still reported: the others wait in the
announcement while the root is in another collective.  The receivers' loop
itself is not read: that it takes the announcement and follows its payload
is the premise of a function one rank runs alone.
"""

from __future__ import annotations

from .alternatives import LoopToken


def announced(info, fn, variant, site, cond, group: str, groups: frozenset, mode: frozenset) -> bool:
    """Whether ``cond``, deciding ``site`` in ``fn`` (run on one rank of
    ``group`` alone), is announced (:func:`_opens_every_arm`), or is a
    failure past which ``site`` is an announcement itself, or lies in an arm
    of an announced decision taken after the failing statement: a failure
    before the announcement sends the root on to its next one, as not
    failing does.  ``info``: the :class:`~cslint.analysis.uniformity.UniformityInfo`."""
    dims = info.program.root_only.get(fn.key)
    if not dims or not info.knowledge.world.span(group) <= dims:
        return False
    if cond.kind == "branch":
        return _opens_every_arm(info, fn, variant, site, cond, group, groups, mode)
    if cond.kind != "exception":
        return False
    index = next((i for i, known in enumerate(variant.sites) if known is site), None)
    if index is not None and _announces(info, variant, index, mode, groups):
        callees = {(known.callee, known.ref) for i, known in enumerate(variant.sites)
                   if _announces(info, variant, i, mode, groups)}
        return len(callees) == 1  # the function announces through one helper
    return any(other.kind == "branch" and other.line > cond.line
               and _opens_every_arm(info, fn, variant, site, other, group, groups, mode) for other in site.conds)


def _opens_every_arm(info, fn, variant, site, cond, group: str, groups: frozenset, mode: frozenset) -> bool:
    """Whether every arm of the ``if``/``elif`` chain ``cond`` belongs to
    opens, on every way through it that issues a collective over ``groups``,
    with a call of one helper that only broadcasts, handed a payload the code
    fixes.  A way of an arm may skip that call only where a test every rank
    agrees on leaves it out (``if is_multi_rank:`` around it: a configuration,
    not the root's choice); an arm or a way issuing nothing over the groups
    is let by inside a loop alone (the others wait for the next
    announcement), as is the chain's missing ``else``."""
    if cond.role_arms is None:
        return False
    arms, open_else, explicit, _split, _handed_out = cond.role_arms
    if not explicit:
        return False
    openings = set()
    idle = open_else
    for arm in arms:
        firsts = [_first_site(info, variant, way, mode, groups) for way in arm]
        if False in firsts:
            return False
        heads = {first for first in firsts if first is not None and _announces(info, variant, first, mode, groups)}
        idle |= None in firsts
        others = {first for first in firsts if first is not None} - heads
        if others and not (heads and all(_skipped_alike(info, fn, variant, head, cond, group, mode) for head in heads)):
            return False  # (every announcement the arm makes, the others' only under tests every rank agrees on)
        openings |= heads
    if not openings or (idle and not _inside_loop(site, cond)):
        return False
    return len({(variant.sites[index].callee, variant.sites[index].ref) for index in openings}) == 1


def _inside_loop(site, cond) -> bool:
    """Whether a loop around ``site`` encloses the chain of ``cond`` too: a
    way issuing nothing leaves the others waiting for the root's next
    announcement only where the root goes on to make one."""
    guard = cond.guard
    return any(other.kind == "loop" and other.guard.line < guard.line <= other.guard.end_line for other in site.conds)


def _skipped_alike(info, fn, variant, index: int, cond, group: str, mode) -> bool:
    """Whether the tests site ``index`` is nested under inside the chain of
    ``cond``, besides the chain's own, are the same on every rank of
    ``group``.  A failure or an early exit before it (a ``continue``, the
    ``except`` of the loop) sends the root on to its next pass, whose
    announcement the others wait for."""
    guard = cond.guard
    for other in variant.sites[index].conds:
        if other is cond or other.kind != "branch" or not guard.line < other.line <= guard.end_line \
                or (other.role_arms is not None and other.role_arms[0] == cond.role_arms[0]):
            continue  # (a link of the same chain: the same arms)
        if info.divergence(other, fn, group, mode) is not None:
            return False
    return True


def _first_site(info, variant, way, mode, groups):
    """The index of the first site of ``way`` issuing a collective over
    ``groups``; None where none does; False where a loop issues one first."""
    for index in way:
        if not info.sequence(variant, (index,), mode, groups):
            continue
        return False if type(index) is LoopToken else index
    return None


def _announces(info, variant, index: int, mode, groups) -> bool:
    """Whether site ``index`` only broadcasts over ``groups`` and is handed
    a payload, and nothing else, that reads nothing (the code fixes it)."""
    site = variant.sites[index]
    return bool(site.args) and not any(site.args) and not any(atoms for _name, atoms in site.kwargs) \
        and all(info.knowledge.broadcasts(operation) for operation, _group in info.sequence(variant, (index,), mode, groups))
