"""Hazards reported in their calling contexts: a hazard whose condition
differs only through its function's parameters is a question about what
the calls of the tree hand those parameters, and over which groups each
call runs the collectives it reaches (:func:`report_at_callers`, the last
step of :func:`~cslint.analysis.hazards.find_hazards`).

One call handing a rank-local value, others agreed ones: the hazard is
reported at that call.  A value is asked over the hazard's group as the
function reads it: a group the function takes as a parameter spans every
dimension there.  Narrowing it to the groups a call binds is not sound
from the call's text alone (the callee may bind the parameter again, or a
deeper helper may run the collective over a group of its own with a
parameter of the same name), so no hazard is dropped for it.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Optional

from ..presets import KIND_DATA_SHARD
from .atoms import DECIDES_NO_TEST
from .divergence import extend_via, fewest_links_first, is_cut, shown_links, transformed
from .positions import parameter_of
from .program import bound_group, call_offset
from .records import fill_pending, is_pending

if TYPE_CHECKING:
    from .hazards import Hazard
    from .uniformity import UniformityInfo

#: Source kinds whose values differ between ranks while their length does
#: not: a sampler that shards by rank pads (or drops) to the same number of
#: batches everywhere, so a loop over it runs equally often on every rank.
SAME_LENGTH_KINDS = frozenset({KIND_DATA_SHARD})


#: how many callers up a hazard reported at its calling context may move
MAX_CONTEXT_DEPTH = 4


def report_at_callers(info: "UniformityInfo", found: list) -> list:
    """The hazards of ``found`` (``[(hazard, mode)]``, in order), a hazard
    whose condition differs only through the function's parameters, in a
    function that one call of the tree hands a rank-local value and others
    values every rank agrees on, reported at that one call instead: the
    parameter is rank-local in that calling context only (a test that hands
    a library function this rank's slice of a batch does not make the
    function's guard rank-local for the library's own callers).  Where that
    call passes its own parameter on, the same question is asked of its
    function, up to :data:`MAX_CONTEXT_DEPTH` calls.  A call site gets one
    such hazard (the first in order), with the flow through the calls; a
    site that is a hazard of its own already keeps that one.  A function
    several calls of which pass rank-local values keeps its hazard (the
    guard is where those paths meet, reported once), and so does one no
    call of the tree reaches, or one only rank-local values reach."""
    program = info.program
    callers = None
    own_sites = {(hazard.path, hazard.site.span.line, hazard.site.span.column) for hazard, _mode in found}
    moved: dict = {}
    out = []
    for hazard, mode in found:
        fn = program.funcs.get(hazard.function_key)
        asked = _asked_over(program, hazard) if fn is not None and fn.params else None
        # the parameters through which alone the hazard's condition differs over its group
        params = _upward(program.eval(hazard.cond.atoms, mode), *asked) if asked is not None else None
        if params is None:
            out.append(hazard)
            continue
        if callers is None:
            callers = callers_of(program)
        context = _calling_context(program, callers, asked, fn, params, mode)
        if context is None:
            out.append(hazard)
            continue
        caller, site, (source, dims, via), calls = context
        key = (caller.path, site.span.line, site.span.column)
        if key in own_sites or key in moved:
            continue
        reach = ((hazard.path, hazard.site.span.line, f"`{hazard.site.callee}` is a collective over {hazard.group}"
                  if hazard.direct else f"`{hazard.site.callee}()` leads to a collective"),)
        group, reached = hazard.group, hazard.reached_groups
        for between, call, target in reversed(calls):  # bound from the collective's side up
            offset = call_offset(call, target)
            group = bound_group(call, target, offset, group, program)
            reached = tuple(sorted({bound_group(call, target, offset, g, program) for g in reached}))
        steps = tuple((between.path, call.span.line, f"`{call.callee}()` calls `{target.qualname}`")
                      for between, call, target in calls[1:])
        moved[key] = dataclasses.replace(
            hazard, path=caller.path, function=caller.qualname, site=site, function_key=caller.key, group=group,
            reached_groups=reached, cond_path=hazard.path, cond_function=hazard.function, direct=False,
            source=source, source_dims=dims, via=shown_links(via), flow_cut=is_cut(via), flow=via, agreed=(),
            collective_facts=None, carrier=None,
            reach_chain=steps + ((fn.path, fn.line, f"`{fn.qualname}` decides it"),) + reach
            + (() if hazard.direct else hazard.reach_chain))
    out.extend(moved.values())
    out.sort(key=lambda h: (h.path, h.site.span.line, h.site.span.column))
    return out


def _asked_over(program, hazard: "Hazard") -> tuple:
    """``(span, ignored kinds)``: the dimensions the hazard's group spans, over
    which each value is asked as the hazard's function reads it, and the
    source kinds that do not count there (:data:`SAME_LENGTH_KINDS` for a
    loop's condition)."""
    return (program.knowledge.world.span(hazard.group),
            SAME_LENGTH_KINDS if hazard.kind == "loop" else frozenset())


def _calling_context(program, callers: dict, asked: tuple, fn, params: dict, mode):
    """The one call a rank-local value for ``params`` of ``fn`` comes from,
    where calls also hand ``fn`` agreed values: ``(caller, site, (source,
    dims, via), calls)``, ``calls`` the ``(function, site, target)`` steps
    from that caller down to ``fn``; None where there is no such single
    call.  A call that passes on its function's own parameters is not where
    the value comes from: the calls of that function are asked in turn."""
    found = _origins(program, callers, asked, fn, params, mode, 0, frozenset({fn.key}))
    if found is None or not found[1]:
        return None
    unique = {(caller.key, site.span.line, site.span.column): (caller, site, value, calls)
              for caller, site, value, calls in found[0]}
    return next(iter(unique.values())) if len(unique) == 1 else None


def _origins(program, callers: dict, asked: tuple, fn, params: dict, mode, depth: int, seen: frozenset):
    """``(origins, agreed)``: the calls a rank-local value for ``params`` of
    ``fn`` comes from (as :func:`_calling_context` gives one), and whether
    some call hands ``fn`` (or a function passing its parameters on to it)
    agreed values; None where a call spreads ``*args``.  Every call is asked
    over the hazard's group as ``fn`` reads it (``asked``:
    :func:`_asked_over`), not over what the call binds it to (see the
    module's docstring)."""
    origins: list = []
    agreed = False
    for caller, site in callers.get((fn.key, mode), ()):
        passed = _local_argument(program, caller, site, fn, params, asked, mode)
        if passed is None:
            agreed = True
            continue
        if passed is False:  # what the call passes is not known (``*args``)
            return None
        value, upward = passed
        step = (caller, site, fn)
        if upward is not None and depth + 1 < MAX_CONTEXT_DEPTH and caller.params and caller.key not in seen:
            # the caller passes on what its own callers gave it: whose value is it?
            above = _origins(program, callers, asked, caller, upward, mode, depth + 1, seen | {caller.key})
            if above is None:
                return None
            if above[0]:
                agreed = agreed or above[1]
                origins.extend((top, call, found, calls + (step,)) for top, call, found, calls in above[0])
                continue
        origins.append((caller, site, value, (step,)))
    return origins, agreed


def callers_of(program) -> "CallersIndex":
    """(function key, mode) -> the ``(caller, site)`` calls of the tree that
    run it, in the order of the tree."""
    return CallersIndex(program)


class CallersIndex:
    """(function key, mode) -> the ``(caller, site)`` calls of the tree that
    run it, in the order of the tree (``get``).  A pending summary
    (:class:`~cslint.analysis.records.PendingFuncFacts`) is worked out only
    when a function its ``passing_refs`` may run is asked about: its call
    sites' references are among those."""

    def __init__(self, program):
        self.program = program
        self.calls: dict = {}  # (key, mode) -> [(caller's position, caller, site)]
        self.pending: dict = {}  # key -> [(position, pending summary)] that may call it
        resolve = program.resolver.resolve
        for position, caller in enumerate(program.funcs.values()):
            if is_pending(caller):
                for ref in caller.passing_refs:
                    for target in resolve(ref):
                        self.pending.setdefault(target.key, []).append((position, caller))
            else:
                self._add(position, caller)
        self.indexed: set = set()  # ids of the pending summaries worked out and added since

    def _add(self, position: int, caller) -> set:
        touched = set()
        program = self.program
        for mode in program.modes:
            variant = program.variant(caller, mode)
            if variant is None:
                continue
            for site in variant.sites:
                if site.ref is None:
                    continue
                for target in program.resolver.resolve(site.ref):
                    self.calls.setdefault((target.key, mode), []).append((position, caller, site))
                    touched.add((target.key, mode))
        return touched

    def get(self, key: tuple, default=()):
        waiting = self.pending.pop(key[0], None)
        if waiting:
            fill_pending([caller for _position, caller in waiting])
            touched = set()
            for position, caller in waiting:
                if id(caller) not in self.indexed:  # each summary once, whichever key asked first
                    self.indexed.add(id(caller))
                    touched |= self._add(position, caller)
            for entry in touched:
                self.calls[entry].sort(key=lambda call: call[0])
        found = self.calls.get(key)
        return default if found is None else [(caller, site) for _position, caller, site in found]


def _local_argument(program, caller, site, target, params: dict, asked: tuple, mode):
    """What the call ``site`` of ``caller`` passes ``target`` for ``params``:
    None when it is the same on every rank of the span ``asked`` holds
    (:func:`_asked_over`), False when the call
    spreads ``*args``/``**kwargs`` (unknown), else ``((source, dims, via),
    upward)``: a rank-local value, its flow ending in the call, and the
    caller's own parameters through which alone it differs (as
    :func:`_upward`; None where something else does)."""
    if site.star:
        return False
    span, ignore = asked
    offset = call_offset(site, target)
    for index in sorted(params):
        arg = program.arg_for_param(target, index, site.args, site.kwargs, offset)
        if not arg:
            continue
        symbolic = program.eval(arg, mode)
        value = program.concrete(symbolic, caller, mode)
        for transform, dims in params[index]:
            for k, (d2, via) in sorted(transformed(value, transform).items(), key=fewest_links_first):
                if k.tag == "S" and k.whole not in DECIDES_NO_TEST and d2 & dims & span and k.kind not in ignore:
                    name = target.params[parameter_of(index)]  # (a parameter's own part: that parameter)
                    link = (caller.path, site.span.line,
                            f"passed as `{name}` to `{target.qualname}` in `{caller.qualname}`")
                    return (k, d2 & dims, extend_via(via, link)), _upward(transformed(symbolic, transform), *asked)
    return None


def _upward(symbolic: dict, span: frozenset, ignore) -> Optional[dict]:
    """The parameters through which alone a symbolic value differs over
    ``span`` (index -> [(transform, dims)]), or None."""
    params: dict = {}
    for k, (dims, _via) in symbolic.items():
        if k.tag == "PARAM":
            params.setdefault(k.index, []).append((k.transform, dims))
        elif k.tag == "S" and k.whole not in DECIDES_NO_TEST and dims & span and k.kind not in ignore:
            return None
    return params or None
