"""Loops over a set: the order a set yields its elements in is each
process's own.

A set of objects iterates in the order of their hashes, which are their
ids (addresses in this process), and a string's hash is salted per process
(``PYTHONHASHSEED``): ranks that hold the same set iterate it in different
orders.  A loop that issues a collective per element then pairs rank A's
collective for one element with rank B's for another (mismatched shapes or
groups: a hang or silently wrong data).  DeepSpeed fixed exactly this by
sorting its de-duplicated parameters (cf5b7de3).

The order is read here from the syntax alone, not carried as a value: it is
a property of the set as a sequence, not of its elements, its length or a
test on it, and it is gone through ``sorted()``, a display that nests the
set as one element, or any call that builds something else from it.  A
loop's iterable is *in set order* when it is a set made in place
(``set(xs)``, ``frozenset(xs)``, ``{f(x) for x in xs}``, a set operator on
one), ``list()``/``tuple()``/``iter()``/``enumerate()``/``zip()``, a
comprehension or a dict over one (``dict.fromkeys(s)``, its views), a call
of a function or a method of the class every ``return`` of which is one, a local name every assignment of which is one
(``seen = set()`` filled by ``seen.add(x)``) and that is never sorted in
place, a parameter annotated as a set, or a field of the class every
assignment of which, in any of its methods, is one.  A set of integers
(``set(range(n))``, ``{0, 1}``) hashes each to itself and keeps one order.
"""

from __future__ import annotations

import ast
import re
from typing import Optional

from ..presets import KIND_ITERATION_ORDER
from .astwalk import CHILDREN, DEFINITIONS, parameters, walk as fast_walk, walked
from .atoms import EMPTY, source
from .callrefs import first_positional_param
from .syntax import dotted, short, unparse
from .vocabulary import ALL_MODES_ALL_DIMS
from .wrappers import own_nodes

_SET_MAKERS = frozenset({"set", "frozenset"})
#: calls whose result yields the elements of their (first) argument in its order
_ORDER_KEEPING = frozenset({"list", "tuple", "iter", "enumerate"})
_SET_METHODS = frozenset({"union", "intersection", "difference", "symmetric_difference", "copy"})
#: a dict built from a set (``{k: f(k) for k in s}``, ``dict.fromkeys(s)``) keeps its order in these
_DICT_VIEWS = frozenset({"items", "keys", "values"})
_SET_OPERATORS = (ast.BitOr, ast.BitAnd, ast.Sub, ast.BitXor)
_SET_ANNOTATIONS = frozenset({"set", "Set", "frozenset", "FrozenSet", "AbstractSet", "MutableSet"})
#: What a source that makes a set holds somewhere (facts.py sets
#: ``ModuleContext.may_make_sets``): a call of ``set`` or ``frozenset`` (not
#: part of a longer name or an attribute), ``Set[``, or a comprehension in
#: braces.  Each search starts from a literal (the look-behinds come after
#: it), so it skips to the next candidate at the speed of a substring search;
#: one pattern that starts with a look-behind tries every position (1 ms per
#: file on vLLM, 3% of the extraction).
_SET_CALL = r"set\((?<=(?<![\w.])set\()|set\((?<=(?<![\w.])frozenset\()"
_SET_COMPREHENSION = r"\{[^{}:\n]*\bfor\b"
_SET_MAKING = {str: (re.compile(_SET_CALL), "Set[", re.compile(_SET_COMPREHENSION)),
               bytes: (re.compile(_SET_CALL.encode()), b"Set[", re.compile(_SET_COMPREHENSION.encode()))}


def may_make_sets(source) -> bool:
    """Whether ``source`` (text or bytes) may make a set somewhere."""
    call, annotation, comprehension = _SET_MAKING[type(source)]
    return call.search(source) is not None or annotation in source or comprehension.search(source) is not None


class SetOrders:
    """Which expressions of one function yield a set's elements in the
    set's order (:func:`made_here`), with the function's local names and
    its class's fields that hold one."""

    def __init__(self, func: ast.AST, self_name: Optional[str], fields=None, ctx=None, class_key=None):
        self.func = func
        self.self_name = self_name
        self.path = ""
        # worked out when a loop first iterates a name or a field: most iterate neither kind of set
        self._fields = fields
        self._names = None
        self._class = (ctx, class_key)

    @property
    def names(self) -> dict:
        if self._names is None:
            self._names = _ordered_locals(self.func, _set_params(self.func), lambda expr, names: self._made(expr, names))
        return self._names

    @property
    def fields(self) -> dict:
        if self._fields is None:
            ctx, class_key = self._class
            self._fields = class_set_fields(ctx, class_key) if ctx is not None and self.self_name else {}
        return self._fields

    @classmethod
    def of_function(cls, info) -> "SetOrders":
        """The set orders of a :class:`~cslint.analysis.function.FunctionInfo`'s
        function; in a file whose source makes no set (no ``set(``,
        ``frozenset(``, set comprehension or ``Set[`` annotation: facts.py),
        only a set display iterated in place."""
        ctx = info.ctx
        if ctx.may_make_sets:
            orders = cls(info.func, info.self_name, None, ctx, info.class_key)
        else:
            orders = cls(info.func, info.self_name, {})
            orders._names = {}
        orders.path = ctx.path
        return orders

    def order_of(self, iterable) -> frozenset:
        """The source a loop over ``iterable`` reads when it iterates a set
        (its order, made where the set was: a source only a loop counts,
        :meth:`~cslint.analysis.uniformity.UniformityInfo.divergence`);
        empty otherwise."""
        made = self.made_here(iterable)
        if made is None:
            return EMPTY
        return frozenset({source(KIND_ITERATION_ORDER, short(unparse(made)), self.path,
                                 getattr(made, "lineno", iterable.lineno), ALL_MODES_ALL_DIMS, whole=False)})

    def made_here(self, expr) -> Optional[ast.AST]:
        """The expression that made the set ``expr`` iterates in the order
        of; None when ``expr`` does not iterate a set's order."""
        return self._made(expr, None)

    def _made(self, expr, names: dict) -> Optional[ast.AST]:
        t = type(expr)
        if t is ast.SetComp:
            return expr
        if t is ast.Set:
            return None if _all_ints(expr.elts) else expr
        if t in (ast.ListComp, ast.GeneratorExp, ast.DictComp):  # (a dict iterates in insertion order)
            for gen in expr.generators:
                found = self._made(gen.iter, names)
                if found is not None:
                    return found
            return None
        if t is ast.Name:
            # the locals are worked out when a name is first asked (None: not yet)
            return (self.names if names is None else names).get(expr.id)
        if t is ast.Attribute:
            if self.self_name and type(expr.value) is ast.Name and expr.value.id == self.self_name:
                return self.fields.get(expr.attr)
            return None
        if t is ast.BinOp and isinstance(expr.op, _SET_OPERATORS):
            return self._made(expr.left, names) or self._made(expr.right, names)
        if t is not ast.Call:
            return None
        func = expr.func
        if type(func) is ast.Name:
            if func.id in _SET_MAKERS:
                return None if _hashes_alike(expr) else expr
            if func.id in _ORDER_KEEPING and expr.args:
                return self._made(expr.args[0], names)
            if func.id == "zip":
                for arg in expr.args:
                    found = self._made(arg, names)
                    if found is not None:
                        return found
                return None
        if type(func) is ast.Attribute and (func.attr in _SET_METHODS or func.attr in _DICT_VIEWS and not expr.args):
            return self._made(func.value, names)
        if type(func) is ast.Attribute and func.attr == "fromkeys" and dotted(func.value) == "dict" and expr.args:
            return self._made(expr.args[0], names)
        ctx, class_key = self._class
        if ctx is None:
            return None
        if type(func) is ast.Name:
            return _set_returning(ctx, None, func.id)
        if self.self_name and type(func) is ast.Attribute and type(func.value) is ast.Name \
                and func.value.id == self.self_name:
            return _set_returning(ctx, class_key, func.attr)
        return None


def reads_element(loop, stmt) -> bool:
    """Whether ``stmt`` in the body of ``loop`` (a ``for`` statement or a
    comprehension) reads the element of the iteration: a name the loop
    binds, or a name its body assigns from one.  A call that takes no part
    of the element (``for x in s: dist.barrier()``) issues the same thing
    in any order."""
    if type(loop) in (ast.For, ast.AsyncFor):
        targets, body = [loop.target], loop.body
    else:
        targets = [gen.target for gen in loop.generators]
        body = []
        stmt = loop.elt if type(loop) is not ast.DictComp else ast.Tuple(elts=[loop.key, loop.value])
    bound = {sub.id for target in targets for sub in walked(target) if type(sub) is ast.Name}
    assignments = [(node.targets, node.value) for part in body for node in walked(part) if type(node) is ast.Assign]
    changed = True
    while changed:
        changed = False
        for targets_of, value in assignments:
            if any(type(sub) is ast.Name and sub.id in bound for sub in fast_walk(value)):
                for target in targets_of:
                    for sub in walked(target):
                        if type(sub) is ast.Name and sub.id not in bound:
                            bound.add(sub.id)
                            changed = True
    return any(type(sub) is ast.Name and sub.id in bound for sub in fast_walk(stmt))


def _set_params(func: ast.AST) -> dict:
    """{name: its ``ast.arg``} of the parameters annotated as sets (``params: Set[Parameter]``)."""
    args = getattr(func, "args", None)
    if args is None:
        return {}
    out = {}
    for arg in parameters(args, starred=False):
        annotation = arg.annotation
        if type(annotation) is ast.Subscript:
            annotation = annotation.value
        text = dotted(annotation) if annotation is not None else None
        if text and text.rsplit(".", 1)[-1] in _SET_ANNOTATIONS:
            out[arg.arg] = arg
    return out


def _ordered_locals(func: ast.AST, params: dict, made) -> dict:
    """{name: the expression that made its set} of the local names every
    assignment of which is in set order (and that are never sorted in
    place), parameters annotated as sets included."""
    assigned: dict = {}
    sorted_in_place = set()
    body = func.body
    stack = list(body) if type(body) is list else [body]
    table, definitions = CHILDREN, DEFINITIONS
    while stack:  # (own_nodes' walk written out: no generator resumed per node)
        node = stack.pop()
        t = type(node)
        if t in definitions:
            continue
        read = table[t]
        if read is not None:
            stack += read(node)
        if t is ast.Assign:
            for target in node.targets:
                if type(target) is ast.Name:
                    assigned.setdefault(target.id, []).append(node.value)
                elif type(target) in (ast.Tuple, ast.List):
                    for element in target.elts:  # unpacked: not followed
                        if type(element) is ast.Name:
                            assigned.setdefault(element.id, []).append(None)
        elif t is ast.AnnAssign and type(node.target) is ast.Name and node.value is not None:
            assigned.setdefault(node.target.id, []).append(node.value)
        elif t is ast.AugAssign and type(node.target) is ast.Name and not isinstance(node.op, _SET_OPERATORS):
            assigned.setdefault(node.target.id, []).append(None)
        elif t in (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.NamedExpr):
            for target in _bound_names(node):
                assigned.setdefault(target, []).append(None)
        elif t is ast.Call and type(node.func) is ast.Attribute and node.func.attr == "sort" \
                and type(node.func.value) is ast.Name:
            sorted_in_place.add(node.func.value.id)
    names = {name: arg for name, arg in params.items() if name not in assigned}
    changed = True
    while changed:
        changed = False
        for name, values in assigned.items():
            if name in names or name in sorted_in_place or any(v is None for v in values):
                continue
            found = [made(v, names) for v in values]
            if all(f is not None for f in found):
                names[name] = found[0]
                changed = True
    for name in sorted_in_place:
        names.pop(name, None)
    return names


def _bound_names(node) -> list:
    if type(node) is ast.NamedExpr:
        targets = [node.target]
    elif type(node) in (ast.For, ast.AsyncFor):
        targets = [node.target]
    else:
        targets = [item.optional_vars for item in node.items if item.optional_vars is not None]
    out = []
    for target in targets:
        for sub in walked(target):
            if type(sub) is ast.Name:
                out.append(sub.id)
    return out


def class_set_fields(ctx, class_key: Optional[str]) -> dict:
    """{field: the expression that made its set} of the fields every
    assignment of which (``self.params = list(set(params))``), in any method
    of the class, is in set order; computed once per class."""
    if not class_key:
        return {}
    memo = ctx.__dict__.setdefault("_set_fields", {})
    found = memo.get(class_key)
    if found is not None:
        return found
    values: dict = {}
    name = class_key.split(":", 1)[-1]
    for node in ctx.tree.body:
        if not (isinstance(node, ast.ClassDef) and node.name == name):
            continue
        for method in node.body:
            owner = first_positional_param(method) if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
            if owner is None:
                continue
            orders = SetOrders(method, owner, {})  # (a field's value read from another field is not followed)
            body = method.body
            stack = list(body) if type(body) is list else [body]
            table, definitions = CHILDREN, DEFINITIONS
            while stack:  # (own_nodes' walk written out: no generator resumed per node)
                sub = stack.pop()
                kind = type(sub)
                if kind in definitions:
                    continue
                read = table[kind]
                if read is not None:
                    stack += read(sub)
                targets = sub.targets if type(sub) is ast.Assign else \
                    [sub.target] if type(sub) in (ast.AnnAssign, ast.AugAssign) and getattr(sub, "value", None) else ()
                for target in targets:
                    if type(target) is ast.Attribute and type(target.value) is ast.Name and target.value.id == owner:
                        keeps = type(sub) is not ast.AugAssign or isinstance(sub.op, _SET_OPERATORS)
                        values.setdefault(target.attr, []).append(orders.made_here(sub.value) if keeps else None)
                if type(sub) is ast.Call and type(sub.func) is ast.Attribute and sub.func.attr == "sort" \
                        and dotted(sub.func.value) and dotted(sub.func.value).startswith(owner + "."):
                    values.setdefault(dotted(sub.func.value).split(".", 1)[1], []).append(None)
    found = {attr: made[0] for attr, made in values.items() if all(m is not None for m in made)}
    memo[class_key] = found
    return found


def _set_returning(ctx, class_key: Optional[str], name: str) -> Optional[ast.AST]:
    """The expression that made the set a function of the file
    (``class_key`` None) or a method of a class returns, when every
    ``return`` of it gives a set's order (``def names(self): return
    set(self._names)``); None otherwise.  Worked out once per function,
    when a loop first iterates a call of it."""
    memo = ctx.__dict__.setdefault("_set_returning", {})
    key = (class_key, name)
    if key in memo:
        return memo[key]
    memo[key] = None  # (a function whose return calls itself is not followed)
    if class_key is None:
        body = ctx.tree.body
    else:
        owner_name = class_key.split(":", 1)[-1]
        body = next((node.body for node in ctx.tree.body
                     if type(node) is ast.ClassDef and node.name == owner_name), ())
    func = next((node for node in body if type(node) in (ast.FunctionDef, ast.AsyncFunctionDef)
                 and node.name == name), None)
    if func is None:
        return None
    owner = first_positional_param(func) if class_key is not None else None
    orders = SetOrders(func, owner, None, ctx, class_key)
    made = None
    for node in own_nodes(func):
        if type(node) in (ast.Yield, ast.YieldFrom):
            return None
        if type(node) is ast.Return:
            this = orders.made_here(node.value) if node.value is not None else None
            if this is None:
                return None
            made = made or this
    memo[key] = made
    return made


def _all_ints(elements) -> bool:
    return bool(elements) and all(type(e) is ast.Constant and type(e.value) is int for e in elements)


def _hashes_alike(call: ast.Call) -> bool:
    """``set(range(n))``, ``set([0, 1])``: a set of integers, each of which
    hashes to itself, iterates in the same order in every process."""
    if not call.args:
        return False  # an empty set filled later: what goes in is not known here
    arg = call.args[0]
    if type(arg) is ast.Call and type(arg.func) is ast.Name and arg.func.id == "range":
        return True
    return type(arg) in (ast.List, ast.Tuple, ast.Set) and _all_ints(arg.elts)
