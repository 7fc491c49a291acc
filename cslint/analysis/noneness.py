"""Whether a value is None: a part of it of its own.

``x is None`` asks one thing of ``x``: which of its bindings (or, for a
call's result, which of its callee's returns) handed back None.  It does
not read the value's length, keys or contents, which the rest of its own
structure holds.  A helper that returns this rank's rows of a tensor or
None, None chosen only by settings, by shapes or by a group's vote::

    def pipelined(self, x):
        if not self.enabled:
            return None
        if into:
            merged = full[rows_of_this_rank]
        else:
            merged = torch.empty(n, width)
        return merged

hands back a value whose contents (and, through the rank-chosen binding,
its structure) differ, while whether it is None is agreed: every ``return``
of a value hands back one that is never None.

What a function's ``return`` statements make of that is kept apart
(``Variant.return_none``, :data:`NONE_PART`): a ``return None`` adds the
tests that chose it, a ``return value`` the tests that chose it and what
decides whether the value is None (:func:`none_of`); and a caller's
``x is None`` / ``x is not None`` reads that part of the call results
``x`` holds (``structure._eval_compare``).  Worked out only for a function
with some ``return None`` (or a bare ``return``): the others hand back
None only through what they return, which their own parts say.

What is never None, read from the code alone (:func:`never_none`): a
constant other than None, a display, a comprehension, an arithmetic,
comparison or f-string result, a slice of anything (``xs[a:b]``,
``t[:, a:b]``), a tensor a library factory makes (``vocabulary``'s tensor
factories) and what indexing or viewing a tensor makes of it
(:func:`tensor_valued`), and a local name every binding of which (plain
assignments alone: no parameter, loop, ``with``, unpacking or walrus) is
one of these.  A name bound to a call reads the call's own None part; a
parameter, or anything else, is read as before: its own structure.

Where a name has other bindings, the one reaching the read decides
(``namereach.py``): a read reached by one plain assignment reads what that
assignment's value says (never None, or the call's None part), whatever
the name's other bindings are (``out = helper(x)`` tested at once while
``out, extra = result`` binds it on another path).
"""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import BLOCKS_OF, param_names
from .atoms import EMPTY, NONE_ARG, NONE_PARAM, OWN_PARAM, param, with_ref
from .callrefs import OWN_PART, part_ref
from .namereach import binding_reaching
from .presence import is_none_literal
from .bindings import target_names
from .receivers import other_bindings
from .scope import canonical_text
from .syntax import dotted
from .vocabulary import (
    HOST_TENSOR_FACTORIES, LIKE_TENSOR_FACTORIES, SIZED_TENSOR_FACTORIES, TENSOR_MAKING_METHODS,
)

#: The index of a :class:`~cslint.analysis.callrefs.PartRef` that stands for
#: whether what the call returns is None (``Variant.return_none``); where the
#: callee keeps no such part, its own structure, else its whole result.
NONE_PART = -3

#: The tensor factories whose result is a tensor whatever they are given.
_TENSOR_FACTORIES = frozenset(SIZED_TENSOR_FACTORIES) | LIKE_TENSOR_FACTORIES | HOST_TENSOR_FACTORIES

#: Expressions whose value is never None whatever their operands hold.
_NEVER_NONE_NODES = (ast.List, ast.Tuple, ast.Dict, ast.Set, ast.ListComp, ast.SetComp, ast.DictComp,
                     ast.GeneratorExp, ast.BinOp, ast.UnaryOp, ast.Compare, ast.JoinedStr, ast.Lambda)

#: The statements other than an assignment that bind a name of the function's own scope
#: (:func:`~cslint.analysis.receivers.other_bindings`; a nested definition is left out, another scope).
_OTHER_BINDING_STATEMENTS = frozenset({
    ast.AugAssign, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.Delete, ast.Import, ast.ImportFrom,
    ast.Global, ast.Nonlocal, ast.ExceptHandler})

#: ``none_of``'s ``kept`` where its caller has not read ``kept_apart`` (which may give None)
_NOT_READ = object()

#: Call references whose result is read whole (a class's object is never None
#: already; an element read by position keeps its own reading).
_WHOLE_RESULTS = frozenset({"class", "part"})


def returns_none_somewhere(info) -> bool:
    """Whether the function of ``info`` (nested definitions left out) has
    a ``return None`` or a bare ``return``, or hands back a parameter
    (``return merged``: None where the caller's argument is): only then is
    what decides that it hands back None kept apart.  Worked out once per
    function."""
    known = info.__dict__.get("_returns_none")
    if known is None:
        info.ensure_scanned()  # (its statements scanned: ``returned_values``, ``bare_return``)
        params = info.params
        known = info.__dict__["_returns_none"] = info.bare_return or any(
            is_none_literal(value) or (type(value) is ast.Name and value.id in params) for value in info.returned_values)
    return known


def _plain_bindings(info) -> dict:
    """name -> the values of its bindings, for the local names every binding
    of which in the function is a plain assignment to the name alone
    (``name = value``, ``name: T = value``); no parameter, no name bound any
    other way, none where an expression may bind (``:=``).  Once per function,
    in one walk of its statements (nested definitions left out)."""
    found = info.__dict__.get("_plain_bindings")
    if found is not None:
        return found
    values: dict = {}
    spoilt: set = set(param_names(info.func))
    if info.binds_in_expressions():
        info.__dict__["_plain_bindings"] = {}
        return {}
    stack = list(getattr(info.func, "body", ()))
    while stack:
        stmt = stack.pop()
        t = type(stmt)
        if t is ast.FunctionDef or t is ast.AsyncFunctionDef or t is ast.ClassDef:
            continue  # (another scope)
        for field in BLOCKS_OF[t]:
            stack.extend(getattr(stmt, field))
        if t is ast.Assign:
            targets = stmt.targets
            if len(targets) == 1 and type(targets[0]) is ast.Name:
                values.setdefault(targets[0].id, []).append(stmt.value)
            else:
                for target in targets:
                    spoilt.update(target_names(target))
        elif t is ast.AnnAssign:
            if type(stmt.target) is ast.Name and stmt.value is not None:
                values.setdefault(stmt.target.id, []).append(stmt.value)
        elif t is ast.Match:
            info.__dict__["_plain_bindings"] = {}  # (a pattern may bind any name)
            return {}
        elif t in _OTHER_BINDING_STATEMENTS:
            spoilt.update(other_bindings(stmt))
    found = info.__dict__["_plain_bindings"] = {name: tuple(v) for name, v in values.items() if name not in spoilt}
    return found


def _plain_values(info, name: str) -> Optional[tuple]:
    """The values of the plain bindings of the local ``name``
    (:func:`_plain_bindings`); None where it has another binding or none.
    A parameter, or a name no statement of the function binds, is answered
    without walking the function's statements (most names a test reads)."""
    if name not in info.local_names or name in info.params:
        return None
    return _plain_bindings(info).get(name)


def tensor_valued(info, expr, visiting: frozenset = frozenset()) -> bool:
    """Whether ``expr`` is a tensor wherever it is evaluated (and so never
    None): a library tensor factory's result, an index or a view of a tensor,
    a local name every binding of which is one (``merged = merged[0]``
    read as the tensor its other bindings make)."""
    t = type(expr)
    if t is ast.Call:
        func = expr.func
        if type(func) is ast.Attribute and func.attr in TENSOR_MAKING_METHODS:
            return tensor_valued(info, func.value, visiting)
        return canonical_text(dotted(func), info.ctx.imports) in _TENSOR_FACTORIES
    if t is ast.Subscript:
        return tensor_valued(info, expr.value, visiting)
    if t is ast.Name:
        return _every_binding(info, expr.id, visiting, tensor_valued)
    return False


def never_none(info, expr, visiting: frozenset = frozenset()) -> bool:
    """Whether ``expr`` is never None, read from the code alone (module text)."""
    t = type(expr)
    if t is ast.Constant:
        return expr.value is not None
    if t in _NEVER_NONE_NODES:
        return True
    if t is ast.Subscript:
        index = expr.slice
        if type(index) is ast.Slice or (type(index) is ast.Tuple and any(type(e) is ast.Slice for e in index.elts)):
            return True  # a slice of a sequence or an array is one of its kind
        return tensor_valued(info, expr.value, visiting)
    if t is ast.Call:
        return tensor_valued(info, expr, visiting)
    if t is ast.Name:
        return _every_binding(info, expr.id, visiting, never_none)
    return False


def _every_binding(info, name: str, visiting: frozenset, test) -> bool:
    """Whether every binding of the local ``name`` passes ``test``; a binding
    read again while its own is asked (``x = x[0]``) is taken to pass, as
    each run of it reads what an earlier binding made."""
    key = (name, test)
    if key in visiting:
        return True
    values = _plain_values(info, name)
    if not values:
        return False
    visiting = visiting | {key}
    return all(test(info, value, visiting) for value in values)


def none_results(atoms: frozenset, own: bool = False, passed: tuple = ()) -> Optional[frozenset]:
    """``atoms`` with each call result read as whether it is None
    (``part_ref(NONE_PART, ref)``; with ``own``, each result read as its own
    structure, ``part_ref(OWN_PART, ref)``, which that part falls back to);
    None where ``atoms`` holds no such result.  ``passed``: the None-ness of
    arguments the call passes apart (:func:`_never_none_arguments`), added
    to the one call result there is."""
    if own:
        split = [atom for atom in atoms if atom.tag == "R" and atom.ref.tag == "part" and atom.ref.index == OWN_PART]
    else:
        split = [atom for atom in atoms if atom.tag == "R" and atom.ref.tag not in _WHOLE_RESULTS]
    if not split:
        return None
    passed = passed if len(split) == 1 else ()
    return atoms.difference(split).union([
        with_ref(atom, part_ref(NONE_PART, atom.ref.ref if own else atom.ref), passed) for atom in split])


def none_of(evaluator, expr, env: dict, value: Optional[frozenset] = None,
            kept=_NOT_READ) -> Optional[frozenset]:
    """What decides whether ``expr`` is None, where that is narrower than
    its own structure: nothing for a value that is never None
    (:func:`never_none`), a call's None part for a call or a local name
    bound by plain assignments (:func:`none_results`), the test and the
    arms' for a conditional expression; None for anything else (read its
    own structure).  ``value`` and ``kept``: what ``evaluator.eval`` and
    ``evaluator.kept_apart`` already gave for ``expr`` in ``env``, where the
    caller read them (a comparison its operands, a ``return`` its value),
    so that they are not worked out again."""
    info = evaluator.info
    if never_none(info, expr):
        return EMPTY
    t = type(expr)
    if t is ast.IfExp:
        arms = EMPTY
        for arm in (expr.body, expr.orelse):
            if type(arm) is ast.Constant:
                continue
            found = none_of(evaluator, arm, env)
            arms |= evaluator.own_structure(arm, env) if found is None else found
        return evaluator.eval(expr.test, env) | arms
    passed = ()
    plain = None
    if t is ast.Name:
        plain = _plain_values(info, expr.id)
        if (plain is None or len(plain) > 1) and info.local_names is not None and expr.id in info.local_names:
            binding = binding_reaching(info, expr)  # (the one binding of several that reaches this read)
            if binding is not None:
                if never_none(info, binding.value):
                    return EMPTY
                if type(binding.value) is ast.Call:
                    plain = (binding.value,)  # its None part, as a call's
                    passed = _never_none_arguments(info, binding.value)
    if t is ast.Call or plain is not None:
        if kept is _NOT_READ:
            kept = evaluator.kept_apart(expr, env)  # (its own structure, where narrower than its whole value)
        if kept is not None:
            found = none_results(kept, own=True)
            return kept if found is None else found
        if value is None:
            value = evaluator.eval(expr, env)
        return none_results(value, passed=_never_none_arguments(info, expr) if t is ast.Call else passed)
    if t is ast.Name and info.local_names is not None and expr.id not in info.rebound_params:  # (scanned)
        held = env.get(expr.id)
        if held is not None and len(held) == 1:
            (atom,) = held  # a parameter as it came, never bound again: whether the caller's is None
            if atom.tag == "P" and atom.index < min(OWN_PARAM, len(info.params)) and info.params[atom.index] == expr.id:
                return frozenset((param(NONE_PARAM + atom.index),))
    return None


def _never_none_arguments(info, call: ast.Call) -> tuple:
    """``(NONE_ARG + position or name, EMPTY)`` for each argument of ``call``
    that is a local name never None (:func:`never_none`): what the callee's
    ``NONE_PARAM`` part of that parameter reads, in the call's None part."""
    out = []
    for index, arg in enumerate(call.args):
        if type(arg) is ast.Starred:
            break  # (the positions past it are not the callee's)
        if type(arg) is ast.Name and never_none(info, arg):
            out.append((NONE_ARG + str(index), EMPTY))
    for kw in call.keywords:
        if kw.arg is not None and type(kw.value) is ast.Name and never_none(info, kw.value):
            out.append((NONE_ARG + kw.arg, EMPTY))
    return tuple(out)
