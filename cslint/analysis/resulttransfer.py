"""What a ``return`` or a ``yield`` statement hands back to the callers:
the atoms it adds to the function's result, its elements where it writes
out a tuple, what decides whether it is None, and how far the tests choosing
the return reach a value every rank of a group got back from one collective
(:func:`agreed_group`).  Mixed into :class:`~cslint.analysis.transfer.Transfer`
(:class:`ResultTransfer`), whose walkers hand each such statement over."""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import own_returns
from .atoms import CONTENTS, EMPTY, KINDS_ONLY, project
from .callrefs import element
from .complements import none_wherever_several_ranks
from .entries import returned_by_key
from .evaluator import Evaluator
from .flows import Flow
from .function import FunctionInfo
from .noneness import none_of, returns_none_somewhere
from .receivers import declares_one_object
from .scope import canonical_text
from .shapes import settled_returned_name, tuple_elements
from .syntax import dotted


class ResultTransfer:
    """Mixed into :class:`~cslint.analysis.transfer.Transfer`: the statement
    semantics of what a function hands back, read with the host's
    ``evaluator`` and ``info``, set before the host calls :meth:`__init__`
    for the mixin's own state."""

    evaluator: Evaluator
    info: FunctionInfo

    def __init__(self) -> None:
        #: (return statement, env, its value's kept_apart, its value's atoms), as :meth:`returned` last read them,
        #: for :meth:`returned_none` next on the same flow
        self._returned_read: Optional[tuple] = None
        self._value_everywhere: Optional[bool] = None  # (hands_back_a_value_everywhere, once)
        self._one_object: Optional[bool] = None  # (declares_one_object, once)

    def returned(self, s: ast.Return, flow: Flow) -> tuple:
        """The atoms ``return value`` adds to the function's result, its
        elements when it writes out a tuple (``return count, agreed``; ``()``
        for any other value, None when it gives none) and its own structure
        where that is kept apart from its elements' (None: the whole value):
        see :meth:`~cslint.analysis.records.Variant.add_return`.  A list or
        tuple written out has the implicit flow alone as its own structure
        (its length is the display's), a comprehension its generators'
        (``comprehension_length``), a container an element is stored into
        what the dataflow keeps apart (``StructureReads.kept_apart``)."""
        value = s.value
        self._returned_read = None
        if value is None or flow.single_rank or _none_wherever_several_ranks(self.info):
            return EMPTY, None, None  # (the last: None in a world of several ranks, anything in a world of one)
        implicit = flow.implicit
        t = type(value)
        if t is ast.Constant and value.value is None:
            return implicit, None, None  # a caller that unpacks the result never reads this path's elements
        if implicit and t is ast.Name and settled_returned_name(self.info.func) == value.id:
            implicit = EMPTY if self.hands_back_a_value_everywhere() else implicit  # one value, whichever way out
        written = value.elts if t is ast.Tuple or t is ast.List else tuple_elements(value)  # (or a tuple either way)
        if written is not None and not any(type(e) is ast.Starred for e in written):
            elements = [self.evaluator.eval(e, flow.env) for e in written]
            # an element is chosen as a return of its value is; the tuple as
            # a whole, and its length, keep the tests
            parts = tuple(atoms | self.choice_reaching(atoms, implicit) for atoms in elements)
            atoms = frozenset().union(implicit, *parts)
            return atoms, parts if t is not ast.List and parts else (), implicit
        if implicit and self.declares_one_object():
            # a test choosing between objects of the one class the function
            # declares: which object (what it was built with, its contents),
            # as a constructor's arguments are; never its None-ness or kind
            implicit = project(CONTENTS, implicit)
        env = flow.env
        if t is ast.Dict:
            keyed = returned_by_key(self, value, env, implicit)
            if keyed is not None:
                return keyed
        if t is ast.ListComp:
            own = self.evaluator.comprehension_length(value, env)
        else:
            own = self.evaluator.kept_apart(value, env)
        atoms = self.evaluator.eval(value, env)
        self._returned_read = (s, env, own, atoms)  # (for :meth:`returned_none`, next, on the same flow)
        parts = self._forwarded_elements(atoms, implicit) if t is ast.Call else ()
        implicit = self.choice_reaching(atoms, implicit)
        return atoms | implicit, parts, None if own is None else own | implicit

    def _forwarded_elements(self, atoms: frozenset, implicit: frozenset) -> tuple:
        """The elements of ``return split(x, rank)``, ``atoms`` its value, where
        ``split`` is a function of this module each of whose returns writes
        out a tuple of one length: each that element of the call's result
        (``callrefs.element``, as ``a, b = split(x, rank)`` reads it), with
        the tests choosing this return, as for a tuple written out; ``()``
        (none apart) for any other call."""
        ctx = self.info.ctx
        lengths = {ctx.returned_tuple_length(atom.ref) for atom in atoms if atom.tag == "R"}
        length = lengths.pop() if len(lengths) == 1 else 0
        return tuple(part | self.choice_reaching(part, implicit)
                     for part in (element(index, atoms, ctx.returns_tuples) for index in range(length)))

    def returned_none(self, s: ast.Return, flow: Flow) -> Optional[frozenset]:
        """What decides whether ``return value`` hands back None, where that
        is narrower than the value's own structure (:mod:`~cslint.analysis.noneness`):
        the tests choosing this return and :func:`~cslint.analysis.noneness.none_of`
        the value; None where it is not (a return of None: the tests alone,
        as :meth:`returned` gives them), or where the function has no
        ``return None`` to tell apart from its values."""
        value = s.value
        if value is None or (type(value) is ast.Constant and value.value is None) or flow.single_rank \
                or not returns_none_somewhere(self.info) or _none_wherever_several_ranks(self.info):
            return None
        read = self._returned_read
        if read is not None and read[0] is s and read[1] is flow.env and type(value) is not ast.ListComp:
            none = none_of(self.evaluator, value, flow.env, read[3], read[2])  # (what :meth:`returned` read)
        else:
            none = none_of(self.evaluator, value, flow.env)
        if none is None:
            return None
        implicit = flow.implicit
        if implicit and type(value) is ast.Name and settled_returned_name(self.info.func) == value.id \
                and self.hands_back_a_value_everywhere():
            implicit = EMPTY  # one value, whichever way out (as :meth:`returned` reads it)
        return none | implicit

    def choice_reaching(self, atoms: frozenset, implicit: frozenset) -> frozenset:
        """What the tests choosing a return (``implicit``) add to a value of
        ``atoms`` it hands back (:func:`agreed_group`)."""
        group = agreed_group(atoms) if implicit else None
        if group is not None and self.hands_back_a_value_everywhere():
            return self.info.ctx.atoms.collective(group, implicit)
        return implicit

    def hands_back_a_value_everywhere(self) -> bool:
        """:func:`hands_back_a_value_everywhere` of the function (once)."""
        found = self._value_everywhere
        if found is None:
            found = self._value_everywhere = hands_back_a_value_everywhere(self.info.func)
        return found

    def declares_one_object(self) -> bool:
        """:func:`~cslint.analysis.receivers.declares_one_object` of the function (once)."""
        found = self._one_object
        if found is None:
            found = self._one_object = declares_one_object(self.info.func, self.info.ctx)
        return found

    def yielded(self, s: ast.stmt, flow: Flow) -> frozenset:
        """The atoms ``yield value`` adds to the result of a ``@contextmanager``
        function: what ``with f() as v`` binds to ``v``."""
        if type(s) is not ast.Expr or type(s.value) is not ast.Yield or s.value.value is None \
                or flow.single_rank or not self.info.is_context_manager:
            return EMPTY
        return self.evaluator.eval(s.value.value, flow.env) | flow.implicit


def _none_wherever_several_ranks(info) -> bool:
    """:func:`~cslint.analysis.complements.none_wherever_several_ranks` of the function (once)."""
    found = info.__dict__.get("_none_several")
    if found is None:
        imports = info.ctx.imports
        knowledge = info.ctx.knowledge
        found = info.__dict__["_none_several"] = none_wherever_several_ranks(
            info.func, lambda call: canonical_text(dotted(call.func), imports),
            knowledge.job_tests, knowledge.world_sizes)
    return found


def hands_back_a_value_everywhere(func) -> bool:
    """Whether every way out of ``func`` hands back a value: each of its
    ``return`` statements names one other than ``None`` and its body never
    runs off its end (:func:`_runs_off_end`)."""
    body = getattr(func, "body", None)
    if not isinstance(body, list) or _runs_off_end(body):
        return False
    for stmt in own_returns(func):
        value = stmt.value
        if value is None or (type(value) is ast.Constant and value.value is None):
            return False
    return True


def _runs_off_end(stmts: list) -> bool:
    """Whether a block may finish without a ``return`` or ``raise``: its last
    statement is neither, nor an ``if``/``else``, ``with`` or ``try`` each
    way through which ends in one (a loop may always be left)."""
    if not stmts:
        return True
    last = stmts[-1]
    kind = type(last)
    if kind is ast.Return or kind is ast.Raise:
        return False
    if kind is ast.If:
        return not last.orelse or _runs_off_end(last.body) or _runs_off_end(last.orelse)
    if kind is ast.With or kind is ast.AsyncWith:
        return _runs_off_end(last.body)
    if kind is ast.Try:
        if last.finalbody and not _runs_off_end(last.finalbody):
            return False
        through = _runs_off_end(last.body) and (not last.orelse or _runs_off_end(last.orelse))
        return through or any(_runs_off_end(handler.body) for handler in last.handlers)
    return True


def agreed_group(atoms: frozenset) -> Optional[str]:
    """The group every atom of ``atoms`` is a uniform collective result over,
    or is made from such results alone: a projection of them (``flags.item()
    > 0``, ``len(parts)``), an attribute read of one (``result.error``) or a
    call whose receiver and arguments are nothing else (``t.tolist()``,
    ``tuple(...)``, ``typing.cast``); None where some atom is anything else,
    or the atoms name no collective at all.

    What every rank of that group got back from one collective is the same
    whichever return hands it on (a root returning the payload it broadcast,
    the others what they received; ``return box[0], box[1]`` after an object
    broadcast into ``box``, element by element): the tests choosing the
    return reach it only as far as the group leaves them
    (:meth:`ResultTransfer.choice_reaching`).  Where another way out hands back None
    (a bare ``return``, the end of the body) those tests also say whether
    there is a result, and that return carries them
    (:func:`hands_back_a_value_everywhere`).  A kinds-only source
    (:data:`~cslint.analysis.atoms.KINDS_ONLY`) stays in the value and
    leaves the rest agreed: the root's own tree, mapped into the payload,
    has the containers the others got back."""
    found: set = set()
    for atom in atoms:
        if atom.tag == "S" and atom.whole == KINDS_ONLY:
            continue  # the kinds of the leaves of a tree a broadcast's root mapped into its payload (mirrors.py)
        if not _made_from_collectives(atom, found) or len(found) > 1:
            return None
    return next(iter(found)) if found else None


def _made_from_collectives(atom, found: set, depth: int = 0) -> bool:
    """Whether ``atom`` is a collective result, or made only from collective
    results (:func:`agreed_group`); adds their groups to ``found``.  A call's
    result reads its receiver and arguments only where no function of the
    tree answers it (its fallback): here the question is only which test
    chose the return, and a callee of the tree that reads more than these
    still hands that on through the atom itself."""
    tag = atom.tag
    if tag == "C":
        found.add(atom.group)
        return True
    if depth >= _MADE_FROM_DEPTH:
        return False
    if tag == "J" or tag == "A":
        inner = atom.inner
    elif tag == "R":
        inner = atom.fallback
    else:
        return False
    return bool(inner) and all(_made_from_collectives(part, found, depth + 1) for part in inner)


#: how many projections, attribute reads and calls :func:`_made_from_collectives`
#: looks through before it gives up
_MADE_FROM_DEPTH = 6
