"""Calling contexts: a site a case parameter decides, judged where it is called.

A function's call site that runs only under some values of its case
parameters (flags with a constant default that its tests read:
``Site.when``, :mod:`cslint.analysis.feasibility`) is reached from the tree
only by the calls that pass those values.  Where every call of the tree
passes a constant there (or leaves the default), those calls are the only
contexts the site runs in, and its conditions are asked again in each of
them (:func:`decided_by_callers`): the parameters read as what that call
passes, and a field of ``self`` that the caller sets in the statements right
before the call (nothing called in between, ``Site.set_before``) as what the
caller wrote there, together with what the function's own plain writes of
it write in that context (a handler recording the fault only where none is
set yet, or from the message the caller passed).  A condition that every
rank agrees on in every such context makes no hazard at the site: the
rank-local values other calls hand
the function never reach it, because those calls rule the site out
(``_handle(msg)`` raising a budget on one rank, ``_handle(msg,
aligned=True)`` only after a world reduction agreed on the fault).  The calls
that do reach it are asked about their own conditions as any call that
reaches a collective is.
"""

from __future__ import annotations

from typing import Optional

from .atoms import DECIDES_NO_TEST, base_field
from .callrefs import receiver_shift
from .divergence import merge, substituted, transformed
from .feasibility import call_allows, passed_values
from .program import Program, call_offset
from .records import FuncFacts, Site


def decided_by_callers(program: Program, fn: FuncFacts, site: Site, span: frozenset, mode, callers: dict,
                       ignore: frozenset = frozenset()) -> bool:
    """Whether every condition of ``site`` (a call site of ``fn`` that runs
    only under some values of its case parameters) is the same on every rank
    of ``span`` in each calling context that can run it (see the module
    docstring); False where some call of the tree passes anything but a
    constant for a parameter the site's values constrain, spreads
    arguments, or no call of the tree runs it.  ``callers``: (function key,
    mode) -> the ``(caller, call site)`` pairs of the tree that run it."""
    when = site.when
    if when is None or not fn.case_params:
        return False
    constrained = [index for index, param in enumerate(fn.case_params)
                   if {case[index] for case in when} != set(param.values)]
    entering = []
    for caller, call in callers.get((fn.key, mode), ()):
        if call.star:
            return False
        offset = call_offset(call, fn)
        passed = passed_values(fn.params, fn.case_params, receiver_shift(fn, offset), call.consts,
                               call.star, call.args, call.kwargs)
        if any(passed[index] is ... for index in constrained):
            return False  # what this call passes there is not known: it may run the site in any context
        if call_allows(fn.case_params, when, passed):
            entering.append((caller, call, offset))
    if not entering:
        return False  # reached from outside the tree, if at all: its own conditions decide
    conds = [cond for cond in site.conds if cond.atoms]
    in_loop = any(cond.kind == "loop" for cond in site.conds)
    for caller, call, offset in entering:
        context = CallingContext(program, fn, caller, call, offset, mode)
        for cond in conds:
            if context.differs(cond, span, ignore, in_loop):
                return False
    return True


class CallingContext:
    """What ``fn``'s atoms hold when ``call`` (a call site of ``caller``)
    runs it: its parameters what the call passes, the fields the caller set
    right before the call (and ``fn`` sets before reading them only by plain
    writes of its own) what the caller wrote, with what those writes write
    in this context."""

    def __init__(self, program: Program, fn: FuncFacts, caller: FuncFacts, call: Site, offset: int, mode):
        self.program = program
        self.fn = fn
        self.caller = caller
        self.call = call
        self.offset = offset
        self.mode = mode
        self._args: dict = {}
        self._fields = self._fields_set_before() if call.ref is not None and call.ref.tag == "method" else {}

    def differs(self, cond, span: frozenset, ignore: frozenset, in_loop: bool) -> bool:
        """Whether ``cond`` of ``fn`` may differ over ``span`` in this context
        (``in_loop``: the site is in a loop, where a field set in the body of
        ``cond`` reaches its next test)."""
        fields = {} if in_loop else {attr: kept for attr, value in self._fields.items()
                                     if (kept := self._kept(attr, value, cond)) is not None}
        value = self._eval(cond.atoms, fields)
        return any(k.tag == "S" and k.whole not in DECIDES_NO_TEST and dims & span and k.kind not in ignore
                   for k, (dims, _via) in value.items())

    # -- the parts of the context ---------------------------------------------------
    def _fields_set_before(self) -> dict:
        """attr -> the caller's value of each field it sets right before the call."""
        variant = self.program.variant(self.caller, self.mode)
        if variant is None or not self.call.set_before:
            return {}
        out = {}
        for attr, line in self.call.set_before:
            if attr in out:
                continue
            written = [w for w in variant.fields if w.attr == attr and w.line == line and not w.element]
            if len(written) != 1 or written[0].class_key != self.fn.class_key:
                continue
            out[attr] = self.program.concrete(self.program.eval(written[0].atoms, self.mode), self.caller,
                                              self.mode)
        return out

    def _kept(self, attr: str, value: dict, cond) -> Optional[dict]:
        """What field ``attr`` holds where ``cond`` reads it, the caller
        having written ``value`` right before the call: that value, together
        with what each plain write of ``fn``'s own outside the body of
        ``cond``'s statement writes in this context (read with the caller's
        value for the field: a handler that records a fault only where none
        is set, or from the message the caller passed, keeps the caller's
        fault); None where ``fn`` may set it otherwise first (a call before
        that statement of a function that writes it, an element store, a
        guard other than a branch)."""
        writes = self._own_writes(attr, cond)
        if writes is None:
            return None
        out = dict(value)
        for write in writes:
            for k, (dims, via) in self._eval(write.atoms, {attr: value}).items():
                merge(out, k, dims, via)
        return out

    def _own_writes(self, attr: str, cond) -> Optional[list]:
        """The plain writes of ``attr`` in ``fn`` outside the body of
        ``cond``'s statement (which may run before ``cond`` reads it); None
        where ``fn`` may set it in another way before: an element store or
        a write of a part of it, a call before that statement of a function
        that writes it, or a guard other than a branch."""
        program = self.program
        variant = program.variant(self.fn, self.mode)
        if variant is None:
            return None
        guard = cond.guard
        if cond.kind != "branch":
            return None
        own = []
        for write in variant.fields:
            if write.attr == attr or base_field(write.attr) == attr:
                if not guard.line < write.line <= guard.end_line:
                    if write.attr != attr or write.element:
                        return None
                    own.append(write)
        for site in variant.sites:
            if site.ref is None or site.span.line >= guard.line:
                continue
            for target in program.resolver.resolve(site.ref):
                written = program.variant(target, self.mode)
                if written is not None and any(w.attr == attr or base_field(w.attr) == attr
                                               for w in written.fields):
                    return None
        return own

    def _argument(self, index: int) -> dict:
        """What the call passes for parameter ``index`` (or its own part), in
        the caller's terms; {} where it passes nothing (the default)."""
        found = self._args.get(index)
        if found is None:
            program = self.program
            arg = program.arg_for_param(self.fn, index, self.call.args, self.call.kwargs, self.offset)
            found = self._args[index] = program.concrete(program.eval(arg, self.mode), self.caller, self.mode) \
                if arg else {}
        return found

    def _eval(self, atoms: frozenset, fields: dict) -> dict:
        out: dict = {}
        for atom in atoms:
            tag = atom.tag
            if tag == "J":
                value = transformed(self._eval(atom.inner, fields), atom.transform)
            elif tag == "F" and (base_field(atom.attr) or atom.attr) in fields \
                    and atom.class_key == self.fn.class_key:
                value = fields[base_field(atom.attr) or atom.attr]
            elif tag == "P":
                value = self._argument(atom.index)
            else:
                value = self._substituted(self.program.eval_atom(atom, self.mode))
            for k, (dims, via) in value.items():
                merge(out, k, dims, via)
        return out

    def _substituted(self, value: dict) -> dict:
        """``value`` with ``fn``'s symbolic parameters replaced by what the call passes."""
        if not any(k.tag == "PARAM" for k in value):
            return value
        return substituted(value, lambda k: self._argument(k.index))
