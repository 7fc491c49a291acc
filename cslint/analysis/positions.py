"""What a call keeps apart of its arguments for the parameters that read
them apart (:func:`own_arguments`): an argument's own structure (its length,
None-ness), and the elements of a list or tuple written out, kept apart at
the parameter that reads them by position.

A caller that hands a callee a display of several values (``f([grad,
state])``) makes one argument of values that differ in different ways: the
callee's ``buffers[0].element_size()`` reads the kind of the first alone,
which may be alike on every rank where the second is not.  So a call passes,
beside the whole argument, each element of such a display under the keyword
``POSITION_ARG + "<position>:" + <argument position or name>``, and a
callee that reads a parameter by a constant position (``buffers[0]``) reads
that position's own parameter part, :func:`position_param`, which the
whole-tree pass fills from those keywords, from the whole argument where a
call passes no display there.

Only a parameter the function never rebinds, never stores into, never
deletes from and never calls a method on (``buffers.insert(0, x)``,
``buffers.sort()`` move its elements) is read by position: what sits at a
position on entry sits there at every read.  The dataflow holds the part as
the parameter's constant key (``("key", name, position)``, the entry the
evaluator reads for ``name[position]``).
"""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import CHILDREN, holds_kind, parameters
from .atoms import EMPTY, NONE_PARAM, OWN_ARG, OWN_PARAM, SHAPE, SPREAD_OWN, param, project
from .callrefs import receiver_shift
from .divergence import merge, transformed

#: Added to ``parameter index * POSITIONS + position``, the index of a
#: parameter's part at one position (``param(...)``): far above the own
#: parts (``atoms.OWN_PARAM + index``)
POSITION_PARAM = 1 << 16
#: the positions kept apart: a display of more elements passes none
POSITIONS = 8
#: the keyword prefix a call passes a display element under
POSITION_ARG = "#pos"


def position_param(index: int, position: int):
    """The atom of parameter ``index``'s part at ``position``."""
    return param(POSITION_PARAM + index * POSITIONS + position)


def parameter_of(index: int) -> int:
    """The parameter a parameter atom's index stands for: itself, its own
    part (``atoms.OWN_PARAM``) or its part at a position."""
    if index >= POSITION_PARAM:
        return (index - POSITION_PARAM) // POSITIONS
    if index >= NONE_PARAM:
        return index - NONE_PARAM
    return index - OWN_PARAM if index >= OWN_PARAM else index


def position_argument(fn, index: int, kwargs: tuple, offset: int) -> Optional[frozenset]:
    """What a call passes ``fn``'s parameter part ``index`` (a position
    index) as a display's element, by the parameter's name or by its
    position among the call's positional arguments (``offset``: 1 where the
    call does not pass the instance); None where it passes no display there."""
    if not kwargs:
        return None
    parameter, position = divmod(index - POSITION_PARAM, POSITIONS)
    prefix = f"{POSITION_ARG}{position}:"
    keys = (prefix + fn.params[parameter] if parameter < len(fn.params) else None,
            prefix + str(parameter - receiver_shift(fn, offset)))
    for kw, atoms in kwargs:
        if kw in keys:
            return atoms
    return None


def parameter_table(params: dict, key: str, index: int, mode) -> Optional[dict]:
    """What callers pass for the parameter atom ``index`` of the function
    ``key`` (``params``: the whole-tree pass's tables): its own table, else,
    for a part no call passes apart, the whole parameter's (its structure,
    for an own part)."""
    table = params.get((key, index, mode))
    if table is None and NONE_PARAM <= index < POSITION_PARAM:  # whether it is None: its own part's table
        table = params.get((key, OWN_PARAM + parameter_of(index), mode))
    if table is None and index >= OWN_PARAM:
        whole = params.get((key, parameter_of(index), mode))
        return whole if index >= POSITION_PARAM else own_structure(whole or {})
    return table


def own_structure(value: dict) -> dict:
    """The own structure of what a divergence map ``value`` stands for: its structure (``SHAPE``), but for a
    source that makes only a length (``Source.whole`` "L": the piece an index picks, a slice's width), which
    stays one, its kind the same on every rank: a type test of a parameter forgives it, as the caller's would."""
    if not any(k.tag == "S" and k.whole == "L" for k in value):
        return transformed(value, SHAPE)
    lengths = {k: entry for k, entry in value.items() if k.tag == "S" and k.whole == "L"}
    out = transformed({k: entry for k, entry in value.items() if k not in lengths}, SHAPE)
    for k, (dims, via) in lengths.items():
        merge(out, k, dims, via)
    return out


def display_positions(evaluator, arg: ast.expr, key: str, env: dict, out: Optional[list]) -> Optional[list]:
    """``out`` (a call's kept-apart arguments so far, or None) with ``(keyword,
    atoms)`` added for each element of ``arg`` when it is a list or tuple
    display of 2 to :data:`POSITIONS` elements, none spread, whose elements
    do not all depend on the same atoms (``key``: the argument's position
    or name)."""
    t = type(arg)
    if (t is not ast.List and t is not ast.Tuple) or not 2 <= len(arg.elts) <= POSITIONS \
            or any(type(e) is ast.Starred for e in arg.elts):
        return out
    values = [evaluator.eval(e, env) for e in arg.elts]
    if all(value == values[0] for value in values):
        return out
    return [*(out or ()), *((f"{POSITION_ARG}{position}:{key}", value) for position, value in enumerate(values))]


#: what makes two writings of one expression two values: a call, an await, a
#: yield, an assignment inside it, a new object built, an element spread
_MAKES_ANEW = frozenset({ast.Call, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr, ast.Lambda, ast.ListComp,
                         ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Starred, ast.List, ast.Set, ast.Dict})


def repeats_one_value(display) -> bool:
    """Whether ``display`` is a list or tuple written out as one expression
    two or more times (``[n, n]``, ``(x.shape[1], x.shape[1])``) with nothing
    in it that makes a new value each time it runs (:data:`_MAKES_ANEW`): every
    element is one value, so an element picked by any index is that value."""
    t = type(display)
    if (t is not ast.List and t is not ast.Tuple) or len(display.elts) < 2:
        return False
    first, rest = display.elts[0], display.elts[1:]
    if type(first) is ast.Name:  # (the commonest element: no walk, no dump)
        return all(type(element) is ast.Name and element.id == first.id for element in rest)
    if any(type(element) is not type(first) for element in rest) \
            or holds_kind(first, _MAKES_ANEW):
        return False
    text = ast.dump(first)
    return all(ast.dump(element) == text for element in rest)


def alike_displays(call: ast.Call) -> tuple:
    """The arguments of ``call`` written out as a display of one value
    repeated (:func:`repeats_one_value`): their positions, up to the first
    spread, and their keywords (:attr:`~.atoms.CallResult.alike_displays`)."""
    out = None
    for index, arg in enumerate(call.args):
        t = type(arg)
        if t is ast.Starred:
            break
        if (t is ast.List or t is ast.Tuple) and repeats_one_value(arg):
            out = [*(out or ()), index]
    for kw in call.keywords:
        t = type(kw.value)
        if kw.arg is not None and (t is ast.List or t is ast.Tuple) and repeats_one_value(kw.value):
            out = [*(out or ()), kw.arg]
    return tuple(out) if out else ()


def passes_alike(fn, index: int, alike: tuple, offset: int) -> bool:
    """Whether a call whose :attr:`~.atoms.CallResult.alike_displays` are
    ``alike`` passes parameter ``index`` of ``fn`` such a display, by the
    parameter's name or by its position among the call's positional
    arguments (``offset``: 1 where the call does not pass the instance, as
    :func:`position_argument`)."""
    if not alike or index >= len(fn.params):
        return False
    return fn.params[index] in alike or index - receiver_shift(fn, offset) in alike


def picks_in_place(info, name: str) -> bool:
    """Whether ``name`` is a parameter of the function of ``info`` that holds
    its elements in place (never rebound, stored into, deleted from, moved by
    a method, or shadowed by a nested function's parameter), so that an
    element picked from it is one of those the caller passed."""
    known = info.held_in_place
    if known is None:
        known = info.held_in_place = {}
    found = known.get(name)
    if found is None:
        found = known[name] = name in info.params and name != info.self_name and name not in info.element_stores \
            and bool(_held_in_place(info, {name: True}))
    return found


def read_positions(info) -> dict:
    """Parameter name -> the constant positions the function reads it at
    (``buffers[0]``), for each parameter that holds its elements in place
    (see the module text); empty for most functions."""
    wanted = {}
    for name, keys in info.position_reads.items():
        positions = {key for key in keys if type(key) is int and 0 <= key < POSITIONS}
        if positions and name in info.params and name != info.self_name and name not in info.element_stores:
            wanted[name] = positions
    if not wanted:
        return wanted
    return _held_in_place(info, wanted)


def _held_in_place(info, wanted: dict) -> dict:
    """``wanted`` (parameter name -> anything) less the parameters the
    function rebinds, stores into, calls a method on that moves elements,
    or shadows in a nested function."""
    todo = [info.func]
    table = CHILDREN
    for node in todo:  # (walk written out, the list growing behind the loop: no generator resumed per node)
        t = type(node)
        read = table[t]
        if read is not None:
            todo += read(node)
        if t is ast.Name and type(node.ctx) is not ast.Load:
            wanted.pop(node.id, None)
        elif t is ast.Attribute and type(node.value) is ast.Name and node.value.id in wanted \
                and (type(node.ctx) is not ast.Load or node.attr not in _LIST_READS):
            wanted.pop(node.value.id, None)
        elif t is ast.arg and node.arg in wanted and node not in parameters(info.func.args, starred=False):
            wanted.pop(node.arg, None)  # (a nested function's parameter of that name: not read by position here)
        if not wanted:
            break
    return wanted


#: the methods of a list or tuple that leave its elements where they are
_LIST_READS = frozenset({"index", "count", "copy"})


def entry_positions(info, env: dict) -> None:
    """Add to a function's entry environment each position part of
    :func:`read_positions` as the parameter's constant key, noting the
    part among the parameter parts the whole-tree pass fills
    (``FunctionInfo.own_params``)."""
    for name, positions in read_positions(info).items():
        index = info.params.index(name)
        for position in positions:
            atom = position_param(index, position)
            env[("key", name, position)] = frozenset((atom,)) | (env.get(name, EMPTY) - {param(index)})
            info.own_params.add(atom.index)


def own_arguments(reads, call: ast.Call, args: tuple, env: dict) -> tuple:
    """``(OWN_ARG + position or name, atoms)`` for each argument of
    ``call`` whose own structure is kept apart from its elements (a
    container stored into, a list or tuple written out: its length is
    the display's, a parameter's own part): what the callee's parameter
    own part (``atoms.OWN_PARAM``) reads, and each element of a display of
    several (:func:`display_positions`), what a
    parameter's part at that position reads.  Empty for most calls.  A call
    that spreads a sequence into its positional arguments (``f(*xs)``) also
    passes, under :data:`atoms.SPREAD_OWN`, the spread sequence's own
    structure: how many positional arguments a ``*args`` parameter collects
    follows it, where the arguments written out are as many on every rank."""
    out = None
    for index, arg in enumerate(call.args):
        if type(arg) is ast.Starred:
            # (the positions past it are not the callee's; every sequence spread from here on counts, but one
            # whose length the syntax writes out, up to the first other one: ``args`` holds it laid out, one
            # entry per element, spreads.call_arguments)
            spread = EMPTY
            place = index  # (``later``'s place among ``args``)
            laid = True
            for later in range(index, len(call.args)):
                inner = call.args[later]
                if type(inner) is ast.Starred:
                    count = reads.spread_length(inner, call) if laid else None
                    if count is not None:
                        place += count
                        continue
                    laid = False
                    own = _argument_own(reads, inner.value, env)
                    if place < len(args):
                        spread |= project(SHAPE, args[place]) if own is None else own
                place += 1
            out = [*(out or ()), (SPREAD_OWN, spread)]
            break
        if type(arg) is ast.List or type(arg) is ast.Tuple:  # (most arguments: no display)
            out = display_positions(reads, arg, str(index), env, out)
        own = _argument_own(reads, arg, env)
        if own is None or (index < len(args) and own == args[index]):
            continue
        if out is None:
            out = []
        out.append((OWN_ARG + str(index), own))
    for kw in call.keywords:
        if kw.arg is None:
            continue
        if type(kw.value) is ast.List or type(kw.value) is ast.Tuple:
            out = display_positions(reads, kw.value, kw.arg, env, out)
        own = _argument_own(reads, kw.value, env)
        if own is None:
            continue
        if out is None:
            out = []
        out.append((OWN_ARG + kw.arg, own))
    return tuple(out) if out else ()


def _argument_own(reads, arg: ast.expr, env: dict):
    """The own structure one argument hands its parameter, kept apart
    from its elements: a name's kept-apart part, nothing for a list or
    tuple written out (its length is the display's), else None (the
    callee reads the argument's structure)."""
    t = type(arg)
    if t is ast.Name:
        return reads.kept_apart(arg, env)
    if (t is ast.List or t is ast.Tuple) and not any(type(e) is ast.Starred for e in arg.elts):
        return EMPTY
    return None
