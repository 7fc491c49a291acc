"""What a nested function reads of its enclosing function's locals.

A nested function (a closure) reads a free name from the nearest enclosing
function binding it, and reads it when it runs, not when it is defined:
Python looks the cell up at each read (late binding), so a closure called
later, or handed to a helper that calls it, or kept as a callback, sees
whatever value the enclosing function last bound there, and a ``nonlocal``
write of another closure too.  :func:`closed_over_entry` gives such a name,
on the nested function's entry, every value the enclosing function binds to
it anywhere (the union of what its dataflow holds under that name at every
node, implicit flow included: ``flag = False; if os.path.exists(p): flag =
True``), so ``flag = os.path.exists(p); def later(): if flag: barrier()``
reads this rank's probe in ``later``.  Before, such a name held nothing
(only a local named like a rank was read, by its name).

What the enclosing function's values say of its own parameters means nothing
in the nested function, whose parameters are its own: each parameter atom is
read as :func:`~cslint.analysis.function.enclosing_params` reads a parameter
the nested function names (the rank-id source of one named like a rank, else
nothing), inside projections, attribute reads and call results too.  The
enclosing function's parameters themselves keep that reading.

The enclosing function's dataflow is solved once for this, with its own
evaluator and fresh tables of resolved calls and typed receivers (put back
after), so what it gives does not depend on whether the enclosing function
was extracted before."""

from __future__ import annotations

import ast

from .atoms import CallResult, CollectiveResult, EMPTY, attribute, made, project
from .dataflow import Dataflow
from .evaluator import Evaluator
from .function import rank_param_sources
from .namereach import declared_shared
from .astwalk import own_nodes


def closed_over_entry(info) -> dict:
    """Name -> atoms, on entry to the nested function ``info``: for each name
    it reads that an enclosing function binds as a local (not as a
    parameter) and that it does not bind itself (a ``nonlocal`` name it
    writes counts as the enclosing one's), what that function binds to it
    anywhere (:func:`_bound_anywhere`), its parameters read as the nested
    function reads them."""
    info.ensure_scanned()
    # (a name the nested function declares ``global`` is the module's, whatever an enclosing function binds)
    reads = _free_reads(info) - info.declared_globals
    if not reads:
        return {}
    out: dict = {}
    shadow = (info.local_names - declared_shared(info)) | info.param_names
    outer = info.enclosing
    while outer is not None:
        outer.ensure_scanned()
        # (one an enclosing function declares ``global`` is the module's for every function nested in it too)
        wanted = (reads & outer.local_names) - outer.param_names - outer.declared_globals - shadow - out.keys()
        if wanted:
            values = _bound_anywhere(outer)
            for name in sorted(wanted):
                out[name] = values.get(name, EMPTY)
        shadow = shadow | outer.local_names | outer.param_names | outer.declared_globals
        outer = outer.enclosing
    return out


def _free_reads(info) -> frozenset:
    """The plain names the nested function's own body (and its parameters'
    defaults, which the enclosing function evaluates) reads."""
    found = info.__dict__.get("_free_reads")
    if found is None:
        names = set()
        for node in own_nodes(info.func):
            if type(node) is ast.Name:
                names.add(node.id)
        found = info.__dict__["_free_reads"] = frozenset(names)
    return found


def _bound_anywhere(outer) -> dict:
    """Name -> atoms: every value ``outer``'s dataflow holds under each of
    its local names at any node, its parameters read as a nested function
    reads them (:func:`_outside`); empty while it is being worked out (a
    nested function of a nested function asked from inside) and where the
    walk nests past the recursion limit."""
    found = outer.__dict__.get("_closed_over")
    if found is not None:
        return found
    outer.__dict__["_closed_over"] = {}
    refs, receivers = outer._refs, outer._receivers
    outer._refs, outer._receivers = {}, None
    try:
        flow = Dataflow(outer, Evaluator(outer), None)
    except RecursionError:
        return {}
    finally:
        outer._refs, outer._receivers = refs, receivers
    names = outer.local_names - outer.param_names
    values: dict = {}
    for env in (*flow.envs.values(), flow.exit_env):
        for name in names:
            atoms = env.get(name)
            if atoms:
                values[name] = values[name] | atoms if name in values else atoms
    replace = dict(rank_param_sources(outer))
    memo: dict = {}
    found = outer.__dict__["_closed_over"] = {name: _outside(atoms, replace, memo) for name, atoms in values.items()}
    return found


def _outside(atoms: frozenset, replace: dict, memo: dict) -> frozenset:
    """``atoms`` of the enclosing function as a nested function reads them:
    a parameter atom becomes its rank-id source (``replace``, by index) or
    nothing, wherever it sits."""
    out = []
    for atom in atoms:
        key = atom
        if key in memo:
            out.extend(memo[key])
            continue
        memo[key] = got = _outside_one(atom, replace, memo)
        out.extend(got)
    return frozenset(out)


def _outside_one(atom, replace: dict, memo: dict) -> frozenset:
    tag = atom.tag
    if tag == "P":
        held = replace.get(atom.index)
        return frozenset({held}) if held is not None else EMPTY
    if tag == "J":
        return project(atom.transform, _outside(atom.inner, replace, memo))
    if tag == "A":
        inner = _outside(atom.inner, replace, memo)
        if inner == atom.inner:
            return frozenset({atom})
        return attribute(inner, atom.attr) if inner else EMPTY
    if tag == "C":
        inner = _outside(atom.inner, replace, memo)
        if inner == atom.inner:
            return frozenset({atom})
        return frozenset({made(CollectiveResult, ("C", atom.group, inner, atom.depth))}) if inner else EMPTY
    if tag == "R":
        args = tuple(_outside(arg, replace, memo) for arg in atom.args)
        kwargs = tuple((word, _outside(value, replace, memo)) for word, value in atom.kwargs)
        fallback = _outside(atom.fallback, replace, memo)
        if args == atom.args and kwargs == atom.kwargs and fallback == atom.fallback:
            return frozenset({atom})
        return frozenset({made(CallResult, ("R", atom.ref, args, kwargs, fallback, atom.path, atom.line, atom.text,
                                            atom.depth, atom.alike_displays))})
    return frozenset({atom})

