"""Arguments a call spreads: ``f(*xs)``, ``f(**kw)``.

A call's atoms keep one entry per positional argument written out, the
starred one's being the spread sequence's (``Evaluator.args``), and one
keyword pair per keyword.  Where a sequence is spread, the parameters from
its position on may take any of its elements or of the arguments written
after it, so the call marks where it starts (:data:`SPREAD_FROM` and the
position, with what those arguments carry); where it is the calling
function's own parameter spread last (``f(*args)``), each parameter takes
that parameter's element at its own place, which the whole-tree pass fills
from what the function's callers pass there.  A ``**kwargs`` parameter takes
every keyword that names no other parameter, and the function's own
``**kwargs`` handed on (``f(**kwargs)``) may fill any parameter no other
argument binds.  A factory ``def make(*args, **kwargs): return Req(*args,
**kwargs)`` thus hands its callers' arguments to the constructor's
parameters, not its first positional one alone.  Any other mapping spread
(``f(**options)`` of a dict the function built) binds nothing: which keys it
holds is not followed.
"""

from __future__ import annotations

import ast
from typing import Optional

from .atoms import EMPTY, OWN_PARAM
from .callrefs import receiver_shift
from .positions import POSITION_PARAM, POSITIONS, position_argument, position_param

#: the keyword a call spreading a sequence at position ``p`` passes as
#: ``SPREAD_FROM + str(p)``, with what its positional arguments from ``p`` on
#: carry (a keyword no call can spell)
SPREAD_FROM = "*"
#: the keyword of a mapping spread that is the calling function's own
#: ``**kwargs`` parameter, handed on as it is (``f(**kwargs)``)
SPREAD_MAPPING = "**"
#: the keyword of any other mapping spread (``f(**options)``): which keys it
#: holds is not followed, so it binds no parameter
OTHER_MAPPING = "**?"


def call_arguments(call: ast.Call, env, evaluate, info, length) -> tuple:
    """``(atoms per positional argument, (keyword, atoms) pairs)`` of a call,
    a spread sequence's start marked (:data:`SPREAD_FROM`).  A spread whose
    length ``length(starred, call)`` knows (``spreadlengths.py``) is laid out
    as that many arguments, each holding the whole sequence, so the
    arguments after it keep their places.  A parameter of ``info``'s
    function spread last as it is (``f(*args)``) passes each parameter of
    the callee it reaches the element at its place
    (:func:`positional_argument`): the function reads the parameter's parts
    at those positions (``FunctionInfo.own_params``), which the whole-tree
    pass fills from what its own callers pass there."""
    args = tuple([evaluate(a.value if type(a) is ast.Starred else a, env) for a in call.args])
    kwargs = tuple([(kw.arg, evaluate(kw.value, env)) if kw.arg else _mapping(kw.value, env, evaluate, info)
                    for kw in call.keywords])
    laid = None  # the positional arguments laid out so far, once a spread of a known length was met
    for position, arg in enumerate(call.args):
        if type(arg) is ast.Starred:
            count = length(arg, call)
            if count is not None:
                if laid is None:
                    laid = list(args[:position])
                laid += [args[position]] * count
                continue
            if laid is not None:
                args, position = (*laid, *args[position:]), len(laid)
            spread = args[position]
            if position == len(args) - 1 and len(spread) == 1:
                (atom,) = spread
                if atom.tag == "P" and atom.index < OWN_PARAM:
                    info.own_params.update(position_param(atom.index, i).index for i in range(POSITIONS))
            return args, kwargs + ((SPREAD_FROM + str(position), EMPTY.union(*args[position:])),)
        if laid is not None:
            laid.append(args[position])
    return (args if laid is None else tuple(laid)), kwargs


def _mapping(value: ast.expr, env, evaluate, info) -> tuple:
    """``(keyword, atoms)`` of a mapping spread: :data:`SPREAD_MAPPING` for
    the function's own ``**kwargs`` parameter as it is, else
    :data:`OTHER_MAPPING`."""
    atoms = evaluate(value, env)
    if len(atoms) == 1:
        (atom,) = atoms
        if atom.tag == "P" and atom.index < len(info.params) and info.params[atom.index][:2] == "**":
            return SPREAD_MAPPING, atoms
    return OTHER_MAPPING, atoms


def _spread_from(kwargs: tuple) -> tuple:
    """``(position, atoms)`` of the sequence a call spreads, else ``(-1, EMPTY)``."""
    for kw, atoms in kwargs:
        if kw[:1] == SPREAD_FROM and kw[1:2].isdigit():
            return int(kw[1:]), atoms
    return -1, EMPTY


def positional_argument(params: tuple, index: int, position: int, collecting: int, args: tuple,
                        kwargs: tuple) -> Optional[frozenset]:
    """The atoms a call passes for parameter ``index`` of ``params`` that no
    keyword of its names, ``position`` its place among the positional
    arguments and ``collecting`` the ``*args`` parameter's index (-1: none),
    or None where it passes nothing there."""
    if position < 0:
        return None  # the instance, where the call does not pass it
    name = params[index]
    spread, spread_atoms = -1, EMPTY
    for kw, atoms in kwargs:
        if kw[:1] == SPREAD_FROM and kw[1:2].isdigit():
            spread, spread_atoms = int(kw[1:]), atoms
            break
    if name[:2] == "**":
        named = set(params)
        passed = [atoms for kw, atoms in kwargs if kw[:1] not in "#*" and kw not in named or kw == SPREAD_MAPPING]
        return EMPTY.union(*passed) if passed else None
    if name[:1] == "*":  # ``*args``: every positional argument from its position on
        start = position if spread < 0 else min(spread, position)
        if not 0 <= start < len(args):
            return None
        return args[start] if start == len(args) - 1 else EMPTY.union(*args[start:])
    if 0 <= collecting < index:
        out = None  # a keyword-only parameter past ``*args`` takes no positional argument
    elif 0 <= spread <= position:
        out = _element(args, spread, position) or spread_atoms
    elif position < len(args):
        return args[position]
    else:
        out = None
    for kw, atoms in kwargs:
        if kw == SPREAD_MAPPING:  # a parameter no positional argument binds, by name from the mapping
            out = atoms if out is None else out | atoms
    return out


def _element(args: tuple, spread: int, position: int) -> Optional[frozenset]:
    """What a parameter at ``position`` takes of a call that spreads, last,
    one parameter of its own function at ``spread`` (``f(*args)``): that
    parameter's part at its place (``positions.position_param``); None for
    any other spread, or a place past the positions kept apart."""
    if spread != len(args) - 1 or position - spread >= POSITIONS or len(args[spread]) != 1:
        return None
    (atom,) = args[spread]
    if atom.tag != "P" or atom.index >= OWN_PARAM:
        return None
    return frozenset((position_param(atom.index, position - spread),))


def element_argument(fn, index: int, args: tuple, kwargs: tuple, offset: int) -> Optional[frozenset]:
    """What a call passes ``fn``'s parameter part ``index`` (a position
    index, ``offset`` as ``positions.position_argument`` takes it): a
    display's element there, else, for its ``*args`` parameter, the
    positional argument at that place among those it collects; None where
    it passes none there or spreads a sequence before it (the element is
    then any of several)."""
    passed = position_argument(fn, index, kwargs, offset)
    parameter, position = divmod(index - POSITION_PARAM, POSITIONS)
    if passed is not None or parameter != collecting_index(fn.params):
        return passed
    spread, _atoms = _spread_from(kwargs) if kwargs else (-1, EMPTY)
    place = parameter - receiver_shift(fn, offset) + position
    if not 0 <= place < len(args) or 0 <= spread <= place:
        return None
    return args[place]


def collecting_index(params: tuple) -> int:
    """The index of the ``*args`` parameter among ``params`` (as
    ``FunctionInfo.params`` spells them), else -1."""
    for index, name in enumerate(params):
        if name[:1] == "*":
            return index if name[:2] != "**" else -1
    return -1
