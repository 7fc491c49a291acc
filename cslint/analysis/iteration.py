"""What each name of a loop's target takes from its iterable.

``for x in xs`` binds ``x`` to an element of ``xs`` (the whole value the
evaluator gives ``xs``).  Two builtins hand each name of the target its own
part: ``enumerate(xs)`` pairs a position (the number of elements before the
element, so ``xs``'s own structure and the start, never an element:
``StructureReads.enumerate_position``) with an element of ``xs``, and
``zip(xs, ys)`` pairs an element of ``xs`` with one of ``ys``, so in ``for
entry, ok in zip(entries, agreed)`` the name ``ok`` holds what ``agreed``
holds and nothing of ``entries``; nested as the target is (``for i, (a, b)
in enumerate(zip(xs, ys))``).  Used by the loop header
(``Transfer.loop_target``) and by a comprehension's generators
(``StructureReads.generated``); the evaluator supplies ``eval``,
``enumerate_position`` and ``_is_builtin``.
"""

from __future__ import annotations

import ast
from typing import Optional

from .atoms import EMPTY
from .bindings import target_names
from .tuplelists import position_entry, tuple_lists


def zip_arguments(iterable, evaluator) -> Optional[list]:
    """The arguments of a call of the builtin ``zip`` (none starred, no
    keyword but ``strict``), else None."""
    if type(iterable) is not ast.Call or type(iterable.func) is not ast.Name or iterable.func.id != "zip" \
            or not iterable.args:
        return None
    if any(kw.arg != "strict" for kw in iterable.keywords) or any(type(a) is ast.Starred for a in iterable.args):
        return None
    return iterable.args if evaluator._is_builtin("zip") else None


def bind_iteration(evaluator, target, iterable, env: dict, extra: frozenset, bind,
                   count_env: Optional[dict] = None) -> None:
    """``bind(name, atoms)`` for each name of ``target``, a loop's or a
    generator's, over ``iterable``: each name's own part (see the module),
    elements read in ``env`` and positions in ``count_env`` (where the trip
    count is read; ``env`` if not given), with ``extra`` (the implicit flow)
    added to each; names bound only once every part is evaluated (a
    comprehension binds into the environment it evaluates in)."""
    bound: list = []
    _parts(evaluator, target, iterable, env, env if count_env is None else count_env, extra, bound)
    for name, atoms in bound:
        bind(name, atoms)


def _parts(evaluator, target, iterable, env: dict, count_env: dict, extra: frozenset, bound: list) -> None:
    elts = target.elts if type(target) in (ast.Tuple, ast.List) else None
    if elts is not None and not any(type(t) is ast.Starred for t in elts):
        if type(iterable) is ast.Name and iterable.id in evaluator.info.tuple_appended \
                and tuple_lists(evaluator.info).get(iterable.id) == len(elts):
            # each target takes what the list's tuples hold at its position (tuplelists.py)
            for position, part in enumerate(elts):
                atoms = env.get(position_entry(iterable.id, position), EMPTY) | extra
                bound.extend((name, atoms) for name in target_names(part))
            return
        if len(elts) == 2:
            position = evaluator.enumerate_position(iterable, count_env)
            if position is not None:
                if type(elts[0]) is ast.Name:
                    bound.append((elts[0].id, position | extra))
                    _parts(evaluator, elts[1], iterable.args[0], env, count_env, extra, bound)
                    return
        args = zip_arguments(iterable, evaluator)
        if args is not None and len(args) == len(elts):
            for part, arg in zip(elts, args):
                _parts(evaluator, part, arg, env, count_env, extra, bound)
            return
    atoms = evaluator.eval(iterable, env) | extra
    for name in target_names(target):
        bound.append((name, atoms))
