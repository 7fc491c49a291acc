"""What a slice's bounds leave of its width (:meth:`StructureReads.span
<cslint.analysis.structure.StructureReads.span>`): the linear difference
of its bounds, read through the names a function binds once; and what an
index leaves of the piece it picks out of a value cut into pieces
(:func:`picks_piece`)."""

from __future__ import annotations

import ast

from .astwalk import BLOCKS_OF, walk as fast_walk
from .vocabulary import ARRAY_TYPES, PIECE_CALLS


#: methods that put another element into a list
_LIST_MUTATORS = frozenset({"append", "extend", "insert", "__setitem__"})


def single_bindings(body) -> dict:
    """Names a body binds exactly once, by a plain assignment, and never
    changes afterwards (no ``append``, no element or slice assignment, no
    augmented assignment, no loop target): name -> the value bound."""
    bound: dict = {}
    changed = set()
    for node in fast_walk(body) if not isinstance(body, list) else (n for stmt in body for n in fast_walk(stmt)):
        t = type(node)
        if t is ast.Assign:
            _note_assignment(node, bound, changed)
        elif t is ast.AugAssign or t is ast.AnnAssign or t is ast.For or t is ast.AsyncFor or t is ast.NamedExpr:
            target = node.target
            _note_names(target, changed)
            if type(target) is ast.Subscript and type(target.value) is ast.Name:
                changed.add(target.value.id)
        elif t is ast.Delete:
            for target in node.targets:
                _note_names(target, changed)
        elif t is ast.Call:
            func = node.func
            if type(func) is ast.Attribute and func.attr in _LIST_MUTATORS and type(func.value) is ast.Name:
                changed.add(func.value.id)
    return _bound_and_changed(bound, changed)


#: the key of :func:`single_bindings`' result under which the names bound
#: more than once or changed lie (no identifier is spelt so)
CHANGED = " changed"


def bound_once(body, walrus: bool) -> dict:
    """:func:`single_bindings` of ``body`` (a function or a module's
    statements) from its statements alone, without entering an expression:
    only a statement binds a name, but for ``:=`` (``walrus``: the file holds
    one, then every node is walked for them as well).  Any binding but one
    plain assignment (a loop, ``with``, ``except``, an import, a definition,
    a pattern, an augmented or annotated assignment, ``del``, ``global``,
    ``:=``) changes a name; an element store changes the container.  The
    answer is the same with and without ``walrus`` where no ``:=`` binds."""
    bound: dict = {}
    changed = set()
    statements = body if type(body) is list else getattr(body, "body", None)
    stack = list(statements) if type(statements) is list else []  # (a lambda's body binds nothing)
    while stack:
        node = stack.pop()
        t = type(node)
        if t is ast.Assign:
            _note_assignment(node, bound, changed)
        elif t in _TARGET_STATEMENTS:
            _note_names(node.target, changed)
        elif t is ast.With or t is ast.AsyncWith:
            for item in node.items:
                if item.optional_vars is not None:
                    _note_names(item.optional_vars, changed)
        elif t is ast.Delete:
            for target in node.targets:
                _note_names(target, changed)
        elif t in _DEFINITIONS:
            changed.add(node.name)
        elif t is ast.ExceptHandler:
            if node.name:
                changed.add(node.name)
        elif t is ast.Import or t is ast.ImportFrom:
            for alias in node.names:
                changed.add((alias.asname or alias.name).split(".")[0])
        elif t is ast.Global or t is ast.Nonlocal:
            changed.update(node.names)
        elif t is ast.Match:
            for inner in fast_walk(node):
                name = getattr(inner, "name", None) or getattr(inner, "rest", None)
                if type(name) is str:
                    changed.add(name)
        fields = BLOCKS_OF[t]
        for field in fields:
            block = getattr(node, field)
            if block:
                stack.extend(block)
    if walrus:  # an expression binds only by ``:=``, whose target is a plain name
        for statement in (statements if type(statements) is list else ()):
            for node in fast_walk(statement):
                if type(node) is ast.NamedExpr:
                    changed.add(node.target.id)
    return _bound_and_changed(bound, changed)


_TARGET_STATEMENTS = (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _note_names(target, out: set) -> None:
    for inner in fast_walk(target):
        if type(inner) is ast.Name:
            out.add(inner.id)


def _note_assignment(node, bound: dict, changed: set) -> None:
    """``a = value`` binds ``a`` (a second binding changes it); ``xs[k] =``
    changes the container ``xs``; any other target changes its names."""
    for target in node.targets:
        if type(target) is ast.Name:
            if target.id in bound:
                changed.add(target.id)
            bound[target.id] = node.value
        elif type(target) is ast.Subscript and type(target.value) is ast.Name:
            changed.add(target.value.id)
        else:
            _note_names(target, changed)


def _bound_and_changed(bound: dict, changed: set) -> dict:
    """The names bound once and never changed, with the changed ones under :data:`CHANGED`."""
    found = {name: value for name, value in bound.items() if name not in changed}
    found[CHANGED] = frozenset(changed)
    return found


#: at most this many terms in a linear form before giving up
_MAX_TERMS = 16


def linear_difference(upper, lower, bindings=None):
    """The leaf expressions ``upper - lower`` still reads, as a polynomial
    over the leaves with integer coefficients (terms that cancel read
    nothing); None when either side is not such a polynomial.  A name in
    ``bindings`` (bound once in the function, never changed) stands for the
    value it was bound to where every name that value reads is bound at most
    once too (a parameter, another such name): reading those names at the
    slice reads what they held at the binding."""
    up, low = _polynomial(upper, bindings), _polynomial(lower, bindings)
    if up is None or low is None:
        return None
    terms, leaves = dict(up[0]), dict(up[1])
    leaves.update(low[1])
    for monomial, coefficient in low[0].items():
        terms[monomial] = terms.get(monomial, 0) - coefficient
    return [leaves[text] for text in sorted({text for monomial, c in terms.items() if c for text in monomial})]


#: at most this many names stand for their values in one bound of a slice
_MAX_SUBSTITUTIONS = 4


def _polynomial(expr, bindings=None, budget=None):
    """``(terms, leaves)``: monomial (sorted leaf texts) -> coefficient, and
    leaf text -> node; None past :data:`_MAX_TERMS` terms.  A name of
    ``bindings`` whose value reads only names bound at most once is read
    through its value (:func:`linear_difference`), at most
    :data:`_MAX_SUBSTITUTIONS` times."""
    t = type(expr)
    if t is ast.Constant and type(expr.value) is int:
        return {(): expr.value}, {}
    if t is ast.UnaryOp and type(expr.op) is ast.USub:
        inner = _polynomial(expr.operand, bindings, budget)
        return None if inner is None else ({m: -c for m, c in inner[0].items()}, inner[1])
    if t is ast.BinOp and type(expr.op) in (ast.Add, ast.Sub, ast.Mult):
        if budget is None:
            budget = [_MAX_SUBSTITUTIONS]
        left, right = _polynomial(expr.left, bindings, budget), _polynomial(expr.right, bindings, budget)
        if left is None or right is None:
            return None
        leaves = {**left[1], **right[1]}
        terms: dict = {}
        if type(expr.op) is ast.Mult:
            for m1, c1 in left[0].items():
                for m2, c2 in right[0].items():
                    monomial = tuple(sorted(m1 + m2))
                    terms[monomial] = terms.get(monomial, 0) + c1 * c2
        else:
            sign = 1 if type(expr.op) is ast.Add else -1
            terms = dict(left[0])
            for monomial, coefficient in right[0].items():
                terms[monomial] = terms.get(monomial, 0) + sign * coefficient
        return (terms, leaves) if len(terms) <= _MAX_TERMS else None
    if t is ast.Name and bindings and expr.id in bindings:
        if budget is None:
            budget = [_MAX_SUBSTITUTIONS]
        value = bindings[expr.id]
        if budget[0] > 0 and type(value) in (ast.BinOp, ast.UnaryOp, ast.Name) and _reads_stable_names(value, bindings):
            budget[0] -= 1
            found = _polynomial(value, bindings, budget)
            if found is not None:
                return found
    if t in (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.BinOp):
        text = ast.dump(expr)
        return {(text,): 1}, {text: expr}
    return None


def makes_slice(node) -> bool:
    """Whether ``node`` is ``slice(lo, hi)`` or ``slice(lo, hi, step)``."""
    return type(node) is ast.Call and type(node.func) is ast.Name and node.func.id == "slice" \
        and 2 <= len(node.args) <= 3


def picks_piece(expr: ast.Subscript, bindings: dict, resolve_ref) -> bool:
    """Whether ``expr`` picks one of the pieces a library call cut a value
    into (:data:`~cslint.analysis.vocabulary.PIECE_CALLS`:
    ``x.tensor_split(n)[rank]``, or ``pieces[rank]`` of a name bound once to
    such a call, ``bindings``): every piece is of the cut value's kind, so a
    rank-local index decides the piece's contents and size, never its kind.
    A call ``resolve_ref`` resolves to a function or a method of a class of
    the tree returns what its own code says; a method of a value whose class
    nothing here knows, or of one annotated as an array, is a library's."""
    index = expr.slice
    t = type(index)
    if t is ast.Slice or t is ast.Tuple or makes_slice(index):
        return False
    cut = expr.value
    if type(cut) is ast.Name:
        cut = bindings.get(cut.id)
    if type(cut) is not ast.Call or type(cut.func) is not ast.Attribute or cut.func.attr not in PIECE_CALLS:
        return False
    ref = resolve_ref(cut.func)
    if ref is None or ref.tag == "name":
        return True
    return ref.tag == "typed" and all(type(term) is tuple and len(term) == 2 and term[0] == "named"
                                      and str(term[1]).rpartition(".")[2] in ARRAY_TYPES for term in ref.terms)


def _reads_stable_names(value, bindings: dict) -> bool:
    """Whether every name ``value`` reads is bound at most once in the
    function (``bindings``' own names, or names it never binds: what
    :func:`single_bindings` left out for being bound again is changed)."""
    for node in fast_walk(value):
        if type(node) is ast.Name and node.id in bindings[CHANGED]:
            return False
    return True


def index_numbers(index, bindings: dict, depth: int = 0) -> bool:
    """Whether an array index is numbers (an int, arithmetic of them, an
    element at two or more constant positions such as ``coords[0, 0]``, a
    name bound once to one: ``bindings`` of :func:`bound_once`), or a tuple
    of such and slices: never a mask (a comparison: as many rows as it holds
    true values) nor a list of positions."""
    t = type(index)
    if t is ast.Tuple and depth == 0:
        return all(type(e) is ast.Slice or index_numbers(e, bindings, 1) for e in index.elts)
    if t is ast.Constant:
        return type(index.value) is int
    if t is ast.BinOp:
        return type(index.op) in _ARITHMETIC and index_numbers(index.left, bindings, depth + 1) \
            and index_numbers(index.right, bindings, depth + 1)
    if t is ast.Subscript:
        at = index.slice
        return type(at) is ast.Tuple and len(at.elts) > 1 \
            and all(type(e) is ast.Constant and type(e.value) is int for e in at.elts)
    if t is ast.Name and depth < 4:
        bound = bindings.get(index.id)
        return isinstance(bound, ast.expr) and index_numbers(bound, bindings, depth + 1)
    return False


_ARITHMETIC = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)
