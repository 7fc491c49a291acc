"""What a slice's bounds leave of its width (:meth:`StructureReads.span
<cslint.analysis.structure.StructureReads.span>`): the linear difference
of its bounds, read through the names a function binds once; and what an
index leaves of the piece it picks out of a value cut into pieces
(:func:`picks_piece`)."""

from __future__ import annotations

import ast

from .astwalk import (
    BLOCKS_OF, DEFINITIONS, imported_names, iter_children, own_nodes, param_names, walk as fast_walk, walked,
)
from .atoms import EMPTY, SIZED, project
from .vocabulary import ARRAY_TYPES, PIECE_CALLS


#: methods that put another element into a list
_LIST_MUTATORS = frozenset({"append", "extend", "insert", "__setitem__"})


def single_bindings(body) -> dict:
    """Names a body binds exactly once, by a plain assignment, and never
    changes afterwards (no ``append``, no element or slice assignment, no
    augmented assignment, no loop target): name -> the value bound."""
    bound: dict = {}
    changed = set()
    if isinstance(body, list):
        nodes: list = []
        for stmt in body:
            nodes += walked(stmt)
    else:
        nodes = walked(body)
    for node in nodes:  # (every node, in walk's order, as lists: no generator resumed per node)
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
        elif t in DEFINITIONS:
            changed.add(node.name)
        elif t is ast.ExceptHandler:
            if node.name:
                changed.add(node.name)
        elif t is ast.Import or t is ast.ImportFrom:
            changed.update(imported_names(node))
        elif t is ast.Global or t is ast.Nonlocal:
            changed.update(node.names)
        elif t is ast.Match:
            for inner in walked(node):
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
            for node in walked(statement):
                if type(node) is ast.NamedExpr:
                    changed.add(node.target.id)
    return _bound_and_changed(bound, changed)


_TARGET_STATEMENTS = (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)


def _note_names(target, out: set) -> None:
    for inner in walked(target):
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


def picks_one(index) -> bool:
    """Whether ``x[index]`` picks one element, as its syntax says: not a
    slice (written out, or :func:`makes_slice`) nor several keys."""
    t = type(index)
    return t is not ast.Slice and t is not ast.Tuple and not makes_slice(index)


def picks_piece(expr: ast.Subscript, bindings: dict, resolve_ref, ctx=None, func=None) -> bool:
    """Whether ``expr`` picks one of the pieces a library call cut a value
    into (:data:`~cslint.analysis.vocabulary.PIECE_CALLS`:
    ``x.tensor_split(n)[rank]``, or ``pieces[rank]`` of a name bound once to
    such a call, ``bindings``): every piece is of the cut value's kind, so a
    rank-local index decides the piece's contents and size, never its kind.
    A call ``resolve_ref`` resolves to a function or a method of a class of
    the tree returns what its own code says; a method of a value whose class
    nothing here knows, or of one annotated as an array, is a library's.
    With the module's context ``ctx`` and the function ``func`` the
    subscript is in, also an element of a list of pieces of one value
    (:func:`picks_listed_piece`)."""
    if not picks_one(expr.slice):
        return False
    cut = expr.value
    if type(cut) is ast.Name:
        cut = bindings.get(cut.id)
    if not cuts_pieces(cut, resolve_ref, ctx.module if ctx is not None else None):
        if ctx is None or not ctx.may_cut_pieces:
            return False
        lists = ctx.piece_lists
        if lists is None:
            lists = ctx.piece_lists = PieceLists(ctx.tree, ctx.may_hold_walrus)
            if not lists.locals:  # the file fills none: no need to ask again
                ctx.may_cut_pieces = False
                return False
        return picks_listed_piece(expr, bindings, lists, func)
    return True


def cuts_pieces(cut, resolve_ref, module) -> bool:
    """Whether ``cut`` is a library call that cuts a value into pieces of its
    own kind (:data:`~cslint.analysis.vocabulary.PIECE_CALLS`): a method of a
    value (``x.tensor_split(n)``) whose class nothing here knows, or that is
    annotated as an array, or a function of a library module, the value its
    first argument (``torch.split(x, n)``: a dotted name through the imports
    outside the file's own top-level package, ``module``).  A call
    ``resolve_ref`` resolves to a function or a method of the tree hands back
    what its own code says."""
    if type(cut) is not ast.Call or type(cut.func) is not ast.Attribute or cut.func.attr not in PIECE_CALLS:
        return False
    ref = resolve_ref(cut.func)
    if ref is None or ref.tag == "name":
        return True
    if ref.tag == "qual":
        return bool(cut.args) and type(cut.args[0]) is not ast.Starred and module is not None \
            and ref.dotted.partition(".")[0] != module.partition(".")[0]
    return ref.tag == "typed" and all(type(term) is tuple and len(term) == 2 and term[0] == "named"
                                      and str(term[1]).rpartition(".")[2] in ARRAY_TYPES for term in ref.terms)


#: builtins that hand back the elements of what they are given, in a container of their own
_ELEMENT_KEEPERS = frozenset({"tuple", "list"})


def returns_pieces(info) -> bool:
    """Whether every ``return`` of the function ``info`` (a ``FunctionInfo``)
    hands back the pieces one library call cut a value into
    (:func:`cuts_pieces`): the call itself, a name the function binds once to
    it, ``tuple(...)`` or ``list(...)`` of either, or a comprehension over
    either whose element is the piece itself or one of the tensor methods
    that keep a tensor a tensor (``tuple(p.contiguous() for p in pieces)``).
    Each piece is of the cut value's kind, so the element an index picks from
    what the function returns is of one kind whatever the index (a caller's
    ``split_last(x, n)[rank]`` is a tensor on every rank:
    :meth:`~cslint.analysis.reads.ProgramReads._returned`, ``PIECE_PICK``).
    A bare ``return`` or any other value answers no."""
    func = info.func
    body = getattr(func, "body", None)
    if type(body) is not list or not body or type(body[-1]) is not ast.Return \
            or not _may_hand_back_pieces(body[-1].value):
        return False  # (it may run off its end: None; most answer here, before the function is scanned)
    values = info.returned_values
    if PIECE_CALLS.isdisjoint(info.callee_names) or not all(_may_hand_back_pieces(value) for value in values):
        return False  # (it cuts nothing: ``return text.split(".")[0]``)
    bindings = bound_once(func, True)
    module = info.ctx.module
    for value in values:
        if not _hands_back_pieces(value, bindings, info.resolve_ref, module, 0):
            return False
    for node in own_nodes(func):
        t = type(node)
        if t is ast.Return and node.value is None or t is ast.Yield or t is ast.YieldFrom:
            return False
    return True


def _may_hand_back_pieces(value) -> bool:
    """The shapes :func:`_hands_back_pieces` takes, read from ``value`` alone."""
    t = type(value)
    if value is None:
        return False
    if t is ast.Name or t is ast.ListComp or t is ast.GeneratorExp:
        return True
    if t is not ast.Call:
        return False
    func = value.func
    return type(func) is ast.Name and func.id in _ELEMENT_KEEPERS \
        or type(func) is ast.Attribute and func.attr in PIECE_CALLS


def _hands_back_pieces(value, bindings: dict, resolve_ref, module, depth: int) -> bool:
    if depth > 3:
        return False
    t = type(value)
    if t is ast.Name:
        bound = bindings.get(value.id)
        return isinstance(bound, ast.expr) and _hands_back_pieces(bound, bindings, resolve_ref, module, depth + 1)
    if t is ast.ListComp or t is ast.GeneratorExp:
        if len(value.generators) != 1:
            return False
        gen = value.generators[0]
        if gen.ifs or gen.is_async or type(gen.target) is not ast.Name:
            return False
        piece, elt = gen.target.id, value.elt
        while type(elt) is ast.Call and type(elt.func) is ast.Attribute and elt.func.attr in _KEEP_TENSOR \
                and not elt.args and not elt.keywords:
            elt = elt.func.value
        return type(elt) is ast.Name and elt.id == piece \
            and _hands_back_pieces(gen.iter, bindings, resolve_ref, module, depth + 1)
    if t is not ast.Call:
        return False
    func = value.func
    if type(func) is ast.Name and func.id in _ELEMENT_KEEPERS and resolve_ref(func) is None:
        return len(value.args) == 1 and not value.keywords \
            and _hands_back_pieces(value.args[0], bindings, resolve_ref, module, depth + 1)
    return cuts_pieces(value, resolve_ref, module)


#: tensor methods that, called with no argument, make a tensor of a tensor (a copy, a laid-out copy)
_KEEP_TENSOR = frozenset({"contiguous", "clone", "detach"})


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


# -- lists of pieces of one value ------------------------------------------------

#: library calls that cut one piece out of a value: ``t.narrow(dim, start, length)`` is of ``t``'s kind
PIECE_OF_CALLS = frozenset({"narrow"})

#: methods of a list that put an element in it other than ``append``, or replace one
_LIST_FILLERS = frozenset({"extend", "insert", "__setitem__", "__iadd__", "setdefault", "update", "add"})


#: what a piece takes from its offset: which elements (its contents), and from an offset whose own structure
#: differs, a size at most (``x.narrow(0, bounds[rank], n)``), never its kind
_OFFSET = "LC-"


def piece_arguments(args: tuple, kwargs: tuple, tensor_first: bool) -> frozenset:
    """What a piece cut by :data:`PIECE_OF_CALLS` (``x.narrow(dim, start,
    length)``; ``torch.narrow(x, ...)`` with ``tensor_first``) takes from
    the arguments besides the value cut: its size from the dimension and
    length (``SIZED``: a length made from values), its contents from the
    offset (:data:`_OFFSET`), never its kind, which is the value's."""
    atoms = args[0] if tensor_first and args else EMPTY
    for position, a in enumerate(args[1:] if tensor_first else args):
        atoms |= project(_OFFSET if position == 1 else SIZED, a)
    for name, a in kwargs:
        atoms |= a if name == "input" else project(_OFFSET if name == "start" else SIZED, a)
    return atoms


def may_cut_pieces(source) -> bool:
    """Whether a file's source may fill a list with pieces of one value
    (:class:`PieceLists`): it calls ``narrow`` (:data:`PIECE_OF_CALLS`)."""
    return (".narrow(" if isinstance(source, str) else b".narrow(") in source


class PieceLists:
    """Which lists of a file hold only pieces of one value, each of that
    value's kind (:func:`picks_listed_piece`), read off the syntax of the
    whole file once:

    - ``locals``: id(function) -> its local names bound once to an empty list
      (``[]``, ``list()``) and otherwise only filled by ``append`` of a
      piece of one parameter the function never rebinds
      (``parts.append(flat.narrow(0, start, size))``), returned, indexed or
      measured: no other mention (handed to another call, bound to another
      name) that could put anything else in;
    - ``functions``: names every definition of which in the file returns
      such a local at each ``return``;
    - ``fields``: attributes every store into which in the file (on any
      object) is an empty list, and every filling call an ``append`` of a
      list of pieces (a call of one of ``functions``, or a name of the
      function bound once to one), beside ``clear``.

    ``narrow`` is the library's where the file defines no function of that
    name.  Other files' stores into a field of that name, and stores through
    another name bound to the same list, are not seen."""

    __slots__ = ("locals", "functions", "fields")

    def __init__(self, tree: ast.Module, walrus: bool):
        self.locals = {}
        self.functions = self.fields = frozenset()
        definitions = []
        cuts = []  # the lines of the calls that cut a piece
        for node in walked(tree):
            t = type(node)
            if t is ast.FunctionDef or t is ast.AsyncFunctionDef:
                definitions.append(node)
            elif t is ast.Call and type(node.func) is ast.Attribute and node.func.attr in PIECE_OF_CALLS:
                cuts.append(node.lineno)
        if not cuts or any(func.name in PIECE_OF_CALLS for func in definitions):
            return
        returning: dict = {}
        for func in definitions:
            listed = EMPTY_NAMES
            if any(func.lineno <= line <= func.end_lineno for line in cuts):
                listed = _piece_locals(func, walrus)
                if listed:
                    self.locals[id(func)] = listed
            returning[func.name] = returning.get(func.name, True) and bool(listed) and _returns_listed(func, listed)
        self.functions = frozenset(name for name, every in returning.items() if every)
        if self.functions:  # a field is filled with what they return
            self.fields = _piece_fields([tree, *definitions], self, walrus)

    def listing(self, expr, bindings: dict) -> bool:
        """Whether ``expr`` (in a function whose :func:`bound_once` is
        ``bindings``) is a list of pieces of one value: a call of one of
        :attr:`functions`, or a name bound once to one."""
        if type(expr) is ast.Name:
            expr = bindings.get(expr.id)
        if type(expr) is not ast.Call:
            return False
        func = expr.func
        return (func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else None) \
            in self.functions


_FUNCTION_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
EMPTY_NAMES: frozenset = frozenset()


def _own_nodes(func):
    """The nodes of ``func``'s own body (or a module's), class bodies
    included, not of the functions and lambdas nested in it."""
    stack = list(func.body)
    while stack:
        node = stack.pop()
        yield node
        if type(node) not in _FUNCTION_DEFS and type(node) is not ast.Lambda:
            stack.extend(iter_children(node))


def _empty_list(value) -> bool:
    t = type(value)
    return t is ast.List and not value.elts or t is ast.Call and type(value.func) is ast.Name \
        and value.func.id == "list" and not value.args and not value.keywords


def _piece_locals(func, walrus: bool) -> frozenset:
    """The names of ``func`` that are lists of pieces of one value (:class:`PieceLists`' ``locals``)."""
    bindings = bound_once(func, walrus)
    candidates = {name for name, value in bindings.items() if name != CHANGED and _empty_list(value)}
    if not candidates:
        return EMPTY_NAMES
    params = param_names(func, starred=False)
    mentions: dict = {}
    allowed: dict = {}
    receivers: dict = {}
    nested = set()
    for node in walked(func):
        t = type(node)
        if t is ast.Name and node.id in candidates:
            mentions[node.id] = mentions.get(node.id, 0) + 1
        elif t in _FUNCTION_DEFS or t is ast.Lambda or t is ast.ClassDef:
            if node is not func:
                nested.update(n.id for n in walked(node) if type(n) is ast.Name and n.id in candidates)
            continue
        allowed_name = _allowed_mention(node, t, candidates, receivers)
        if allowed_name is not None:
            allowed[allowed_name] = allowed.get(allowed_name, 0) + 1
    found = set()
    for name in candidates - nested:
        cut = receivers.get(name)
        if cut and len(cut) == 1 and mentions.get(name, 0) == allowed.get(name, 0) + 1:
            source = next(iter(cut))
            if source is not None and source in params and source not in bindings \
                    and source not in bindings[CHANGED]:
                found.add(name)
    return frozenset(found)


def _allowed_mention(node, t, candidates: set, receivers: dict):
    """The candidate list ``node`` mentions in a way that puts nothing else
    in it (None: no such mention here): ``xs.append(piece)`` (the cut
    value's name noted in ``receivers``), ``return xs``, ``xs[i]`` read,
    ``len(xs)``, a loop over ``xs``."""
    if t is ast.Call:
        func = node.func
        if type(func) is ast.Attribute and type(func.value) is ast.Name and func.value.id in candidates \
                and func.attr == "append" and len(node.args) == 1 and not node.keywords:
            receivers.setdefault(func.value.id, set()).add(_piece_source(node.args[0]))
            return func.value.id
        if type(func) is ast.Name and func.id == "len" and len(node.args) == 1 and type(node.args[0]) is ast.Name \
                and node.args[0].id in candidates:
            return node.args[0].id
    elif t is ast.Return or t is ast.Subscript and type(node.ctx) is ast.Load:
        value = node.value
        if type(value) is ast.Name and value.id in candidates:
            return value.id
    elif t is ast.For or t is ast.comprehension:
        if type(node.iter) is ast.Name and node.iter.id in candidates:
            return node.iter.id
    return None


def _piece_source(piece):
    """The name of the value ``piece`` is one piece of (``flat.narrow(0, s, n)``), or None."""
    if type(piece) is ast.Call and type(piece.func) is ast.Attribute and piece.func.attr in PIECE_OF_CALLS \
            and type(piece.func.value) is ast.Name:
        return piece.func.value.id
    return None


def _returns_listed(func, listed: frozenset) -> bool:
    """Whether every ``return`` of ``func`` (one at least) returns one of its ``listed`` locals."""
    returns = 0
    for node in _own_nodes(func):
        t = type(node)
        if t is ast.Return:
            if type(node.value) is not ast.Name or node.value.id not in listed:
                return False
            returns += 1
        elif t is ast.Yield or t is ast.YieldFrom:
            return False
    return returns > 0


def _piece_fields(definitions: list, lists: PieceLists, walrus: bool) -> frozenset:
    """:class:`PieceLists`' ``fields``: attributes filled only with lists of
    pieces, by the statements of ``definitions`` (the module, then each
    function)."""
    good: set = set()
    bad: set = set()
    for func in definitions:
        bindings = None
        for node in _own_nodes(func):
            t = type(node)
            if t is ast.Assign or t is ast.AugAssign or t is ast.AnnAssign:
                for target in node.targets if t is ast.Assign else (node.target,):
                    if type(target) is ast.Attribute:
                        if t is ast.AugAssign or not _empty_list(node.value):
                            bad.add(target.attr)
                    elif type(target) is ast.Subscript and type(target.value) is ast.Attribute:
                        bad.add(target.value.attr)
                    else:  # unpacking into fields: ``self.parts, n = ...``
                        bad.update(n.attr for n in walked(target) if type(n) is ast.Attribute)
            elif t is ast.Delete:
                for target in node.targets:
                    if type(target) is ast.Subscript and type(target.value) is ast.Attribute:
                        bad.add(target.value.attr)
            elif t is ast.Call and type(node.func) is ast.Attribute and type(node.func.value) is ast.Attribute:
                method, attr = node.func.attr, node.func.value.attr
                if method == "append":
                    if bindings is None:
                        bindings = bound_once(func, walrus)
                    if len(node.args) == 1 and not node.keywords and lists.listing(node.args[0], bindings):
                        good.add(attr)
                    else:
                        bad.add(attr)
                elif method in _LIST_FILLERS:
                    bad.add(attr)
    return frozenset(good - bad)


def picks_listed_piece(expr: ast.Subscript, bindings: dict, lists: PieceLists, func) -> bool:
    """Whether ``expr`` picks one element of a list of pieces of one value
    (:class:`PieceLists`): ``parts[rank]`` of a local filled with
    ``flat.narrow(...)`` pieces, of a name bound once to a call of a function
    returning one, or ``self.parts[i][rank]`` of a field filled with them
    (also through a name bound once to it): every piece is of the cut value's
    kind, so a rank-local index decides the piece's contents and size, never
    its kind, as :func:`picks_piece`."""
    if not picks_one(expr.slice):
        return False
    cut = expr.value
    if type(cut) is ast.Name:
        if cut.id in lists.locals.get(id(func), ()):
            return True
        cut = bindings.get(cut.id)
    if type(cut) is ast.Subscript and type(cut.value) is ast.Attribute and cut.value.attr in lists.fields:
        return type(cut.slice) is not ast.Slice
    return lists.listing(cut, bindings)
