"""Neutral values: what a rank that has nothing to say contributes to a gather.

When every rank enters a collective, a rank that would have skipped it must
send a value that does not change what the other ranks decide.  That value
depends on how the gathered list is *consumed*, never on the collective
itself:

==========================  ======================
consumption                 neutral element
==========================  ======================
``any(g)``                  ``False``
``all(g)``                  ``True``
``sum(g)``                  ``0``
``max(g)`` (numeric)        ``float('-inf')``
``min(g)`` (numeric)        ``float('inf')``
``LITERAL in g``            ``None`` (never equal to a non-None literal)
``len(g)``                  anything (the count of ranks does not change)
``any(s[k] for s in g)``    element ``k`` of a status tuple, same table
``any(b for a, b in g)``    same, by unpacking position
==========================  ======================

Anything else (the list returned, indexed by rank, iterated in a ``for``
statement, passed on) gives no neutral value and the fix is refused with the
use that blocked it.  ``max``/``min`` need the payload to be numeric; when
its type cannot be seen from the source, the fix is refused too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from .locate import walk

AGGREGATE_NEUTRAL = {
    "any": "False",
    "all": "True",
    "sum": "0",
    "max": "float('-inf')",
    "min": "float('inf')",
}
NUMERIC_ONLY = {"max", "min"}
NUMERIC_CALLS = {"int", "float", "len", "sum", "abs", "round", "min", "max"}
MEMBERSHIP_NEUTRAL = "None"


class NoNeutral(Exception):
    """No neutral value can be proven; the message says which use blocked it."""


@dataclass
class _Slot:
    """Constraints collected for one element position (None: the whole item)."""

    neutrals: set[str] = field(default_factory=set)
    reasons: list[str] = field(default_factory=list)
    numeric_needed: bool = False


def code_of(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _aggregate_of(call: cst.Call) -> str | None:
    """'any' for `any(<one positional arg>)`, without key=/default= extras."""
    plain = len(call.args) == 1 and call.args[0].keyword is None and not call.args[0].star
    if isinstance(call.func, cst.Name) and call.func.value in AGGREGATE_NEUTRAL and plain:
        return call.func.value
    return None


def _literal(node: cst.CSTNode) -> bool:
    if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString)):
        return True
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return True
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return _literal(node.expression)
    return False


def looks_numeric(expr: cst.CSTNode, assignments: dict[str, cst.CSTNode], depth: int = 0) -> bool:
    """Whether an expression is visibly a number (literal, arithmetic, int()/len()...)."""
    if depth > 8:
        return False
    if isinstance(expr, (cst.Integer, cst.Float)):
        return True
    if isinstance(expr, cst.UnaryOperation):
        return looks_numeric(expr.expression, assignments, depth + 1)
    if isinstance(expr, cst.BinaryOperation):
        return looks_numeric(expr.left, assignments, depth + 1) or looks_numeric(expr.right, assignments, depth + 1)
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value in NUMERIC_CALLS:
        return True
    if isinstance(expr, cst.Name) and expr.value in assignments:
        return looks_numeric(assignments[expr.value], assignments, depth + 1)
    return False


class ConsumptionAnalyzer:
    """Infers a neutral value for one gathered result inside one function."""

    def __init__(self, function: cst.CSTNode, parents: dict[int, cst.CSTNode]) -> None:
        self.function = function
        self.parents = parents

    # -- public --------------------------------------------------------------
    def neutral_for(self, call: cst.Call, payload: cst.CSTNode, assignments: dict[str, cst.CSTNode],
                    result_names: list[str]) -> str:
        """Source text of the neutral payload, or raise NoNeutral.

        ``result_names`` are the local names the call's result is bound to
        (empty when the result is consumed in place, e.g. ``any(gather(x))``).
        """
        slots: dict[int | None, _Slot] = {}
        if result_names:
            for name in result_names:
                uses = self._uses_of(name, exclude=call)
                if not uses:
                    raise NoNeutral(f"the gathered result `{name}` is never read here; its consumers are unknown")
                for use in uses:
                    self._classify_list_use(use, slots)
        else:
            self._classify_list_use(call, slots)
        return self._combine(slots, payload, assignments)

    # -- uses ------------------------------------------------------------------
    def _uses_of(self, name: str, exclude: cst.CSTNode) -> list[cst.Name]:
        uses = []
        for node in walk(self.function, into_functions=True):
            if isinstance(node, cst.Name) and node.value == name and self._is_load(node):
                uses.append(node)
        return uses

    def _is_load(self, node: cst.Name) -> bool:
        parent = self.parents.get(id(node))
        if isinstance(parent, cst.AssignTarget) and parent.target is node:
            return False
        if isinstance(parent, (cst.Param, cst.FunctionDef, cst.ClassDef, cst.ImportAlias, cst.AsName)):
            return False
        if isinstance(parent, cst.Attribute) and parent.attr is node:
            return False
        if isinstance(parent, cst.Arg) and parent.keyword is node:
            return False
        if isinstance(parent, (cst.AugAssign, cst.AnnAssign)) and parent.target is node:
            return False
        if isinstance(parent, (cst.Tuple, cst.List, cst.Element, cst.CompFor)):
            # unpacking targets: `a, b = ...` or `for a, b in`
            anc = parent
            while isinstance(anc, (cst.Tuple, cst.List, cst.Element)):
                anc = self.parents.get(id(anc))
            if isinstance(anc, cst.AssignTarget):
                return False
            if isinstance(anc, (cst.CompFor, cst.For)) and _contains(anc.target, node):
                return False
        return not (isinstance(parent, (cst.For, cst.CompFor)) and parent.target is node)

    def _classify_list_use(self, use: cst.CSTNode, slots: dict[int | None, _Slot]) -> None:
        """One read of the gathered list (or the call itself when consumed in place)."""
        parent = self.parents.get(id(use))
        text = code_of(self._statement_text_anchor(use))
        if isinstance(parent, cst.Arg):
            call = self.parents.get(id(parent))
            if isinstance(call, cst.Call):
                agg = _aggregate_of(call)
                if agg:
                    self._add(slots, None, agg, text)
                    return
                if isinstance(call.func, cst.Name) and call.func.value == "len":
                    return
        if isinstance(parent, cst.ComparisonTarget) and isinstance(parent.operator, (cst.In, cst.NotIn)):
            comparison = self.parents.get(id(parent))
            provable = (isinstance(comparison, cst.Comparison) and len(comparison.comparisons) == 1
                        and _literal(comparison.left))  # literals never equal None; `None` is not one
            if provable:
                slot = slots.setdefault(None, _Slot())
                slot.neutrals.add(MEMBERSHIP_NEUTRAL)
                slot.reasons.append(text)
                return
            raise NoNeutral(f"membership test `{text}` cannot be proven unchanged by any neutral value")
        if isinstance(parent, cst.CompFor) and parent.iter is use:
            self._classify_generator(parent, slots, text)
            return
        raise NoNeutral(f"the gathered result is consumed by `{text}`; no neutral value follows from it")

    def _classify_generator(self, comp_for: cst.CompFor, slots: dict[int | None, _Slot], text: str) -> None:
        """`agg(<elt> for <target> in g)`: elt reads one element position."""
        generator = self.parents.get(id(comp_for))
        if not isinstance(generator, cst.GeneratorExp) or comp_for.inner_for_in is not None or comp_for.ifs:
            raise NoNeutral(f"the gathered result is consumed by `{text}`; no neutral value follows from it")
        arg = self.parents.get(id(generator))
        call = self.parents.get(id(arg)) if isinstance(arg, cst.Arg) else generator
        agg = _aggregate_of(call) if isinstance(call, cst.Call) else None
        if agg is None:
            raise NoNeutral(f"the gathered result is consumed by `{text}`; no neutral value follows from it")
        position = _element_position(comp_for.target, generator.elt)
        if position is False:
            raise NoNeutral(f"`{code_of(generator.elt)}` in `{text}` is not an element of the gathered items")
        self._add(slots, position, agg, text)

    def _add(self, slots, position, agg: str, text: str) -> None:
        slot = slots.setdefault(position, _Slot())
        slot.neutrals.add(AGGREGATE_NEUTRAL[agg])
        slot.reasons.append(text)
        if agg in NUMERIC_ONLY:
            slot.numeric_needed = True

    def _statement_text_anchor(self, node: cst.CSTNode) -> cst.CSTNode:
        """The smallest enclosing expression worth quoting in a message."""
        current = node
        for _ in range(4):
            parent = self.parents.get(id(current))
            if parent is None or isinstance(parent, (cst.BaseStatement, cst.BaseSmallStatement, cst.IndentedBlock)):
                break
            current = parent
        return current

    # -- combining ----------------------------------------------------------------
    def _combine(self, slots: dict[int | None, _Slot], payload: cst.CSTNode,
                 assignments: dict[str, cst.CSTNode]) -> str:
        if not slots:
            raise NoNeutral("the gathered result is only counted; no neutral value is needed but none is proven")
        payload = _resolve(payload, assignments)
        if None in slots:
            if len(slots) > 1:
                raise NoNeutral("the gathered items are used both whole and element by element")
            return self._one(slots[None], payload, assignments)
        if not isinstance(payload, cst.Tuple):
            raise NoNeutral("the gathered items are read element by element but the payload is not a visible tuple")
        elements = [e.value for e in payload.elements]
        if any(isinstance(e, cst.StarredElement) for e in payload.elements):
            raise NoNeutral("the payload tuple has a starred element")
        parts = []
        for index, element in enumerate(elements):
            slot = slots.get(index)
            parts.append(self._one(slot, element, assignments) if slot else "None")
        if max(k for k in slots if k is not None) >= len(elements):
            raise NoNeutral("an element index is out of the payload tuple's range")
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"

    @staticmethod
    def _one(slot: _Slot, payload: cst.CSTNode, assignments: dict[str, cst.CSTNode]) -> str:
        if len(slot.neutrals) != 1:
            uses = "; ".join(f"`{r}`" for r in slot.reasons)
            raise NoNeutral(f"consumers disagree on a neutral value ({uses})")
        neutral = next(iter(slot.neutrals))
        if slot.numeric_needed and not looks_numeric(payload, assignments):
            raise NoNeutral(f"`{slot.reasons[0]}` needs an identity but the payload's type is not visibly numeric")
        return neutral


def _contains(root: cst.CSTNode, node: cst.CSTNode) -> bool:
    return any(n is node for n in walk(root, into_functions=True))


def _resolve(payload: cst.CSTNode, assignments: dict[str, cst.CSTNode]) -> cst.CSTNode:
    seen = 0
    while isinstance(payload, cst.Name) and payload.value in assignments and seen < 8:
        payload = assignments[payload.value]
        seen += 1
    return payload


def _element_position(target: cst.CSTNode, elt: cst.CSTNode):
    """Which element of each gathered item the generator's elt reads.

    None: the item itself (`s for s in g`, `bool(s) for s in g`);
    k: `s[k] for s in g` or `b for a, b in g`; False: anything else.
    """
    if isinstance(elt, cst.Call) and isinstance(elt.func, cst.Name) and elt.func.value == "bool" and len(elt.args) == 1:
        elt = elt.args[0].value
    if isinstance(target, cst.Name):
        if isinstance(elt, cst.Name) and elt.value == target.value:
            return None
        if (isinstance(elt, cst.Subscript) and isinstance(elt.value, cst.Name) and elt.value.value == target.value
                and len(elt.slice) == 1 and isinstance(elt.slice[0].slice, cst.Index)
                and isinstance(elt.slice[0].slice.value, cst.Integer)):
            return int(elt.slice[0].slice.value.value)
        return False
    if isinstance(target, (cst.Tuple, cst.List)) and isinstance(elt, cst.Name):
        for index, element in enumerate(target.elements):
            if isinstance(element.value, cst.Name) and element.value.value == elt.value:
                return index
    return False
