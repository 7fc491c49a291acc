"""Module-level names that only ever hold a function: a call through one is a
call of one of those functions.

A module picks an implementation once and calls it through its own name::

    try:
        reduce_scatter = torch.distributed.reduce_scatter_tensor
    except AttributeError:
        reduce_scatter = torch.distributed._reduce_scatter_base

    def enable_fp32_accumulation():
        global reduce_scatter
        reduce_scatter = reduce_scatter_with_fp32_accumulation

Without this a call ``reduce_scatter(view, data, group=g)`` ran nothing the
analysis knew: its result was every argument at once, so the handle the
collective hands back took this rank's slice of the buffer (its offset), and
whether the handle was there read that offset.  Every binding of such a name
(at module level, through ``if``/``try``/``with`` blocks, and in functions
that declare it ``global``) is a plain reference to a function of the module,
an imported name or an attribute of an imported module; the call is read as
each of those calls in turn (:func:`alias_calls`), their results together.
Any other binding (a call's result, an unpacking, an import of the name, a
``def``) leaves the name as it was.

A function probes for a library's function, private or newer than some
installs, and calls it through a local::

    index_of = getattr(torch.cuda, "_get_nvml_device_index", None)
    if index_of is None:
        return None
    index = index_of(0)

Such a call ran an unknown library function, which may fail on one rank
only.  Where every binding of the local is such a probe of one module's
attribute (:func:`probed_functions`), the call is read as that function
(:func:`probed_text`) for what its text decides: a preset source, a query
answered alike on every rank, whether it can raise."""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import BLOCKS_OF, CHILDREN, DEFINITIONS, imported_names, walked
from .bindings import TARGET_STATEMENTS, statement_targets
from .syntax import dotted

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def module_level_aliases(tree: ast.Module, module_functions, imports) -> dict:
    """name -> the expressions a name is bound to at module level, where each
    of those bindings names a function (the candidates: a function may still
    bind one otherwise, :func:`function_aliases`)."""
    values: dict = {}
    spoilt: set = set()
    for stmt in _statements(tree.body):
        _note_binding(stmt, values, spoilt)
    return {name: tuple(exprs) for name, exprs in values.items()
            if name not in spoilt and name not in module_functions and name not in imports
            and all(_names_function(expr, module_functions, imports) for expr in exprs)}


def function_aliases(tree: ast.Module, module_functions, imports) -> dict:
    """name -> the expressions (``ast.Name``/``ast.Attribute``) a module-level
    name is bound to, where every binding of it names a function."""
    found = module_level_aliases(tree, module_functions, imports)
    if not found:
        return {}
    candidates = set(found)
    values = {name: list(exprs) for name, exprs in found.items()}
    spoilt: set = set()
    # the rest of the module: a walrus binding one, a function declaring one ``global``
    rebinding = []
    for node in walked(tree):
        kind = type(node)
        if kind is ast.NamedExpr and node.target.id in candidates:
            spoilt.add(node.target.id)
        elif kind in _DEFINITIONS:
            declared = {name for stmt in _statements(node.body) if type(stmt) is ast.Global
                        for name in stmt.names} & candidates
            if declared:
                rebinding.append((node, declared))
    for func, declared in rebinding:
        for stmt in _statements(func.body):
            _note_binding(stmt, values, spoilt, declared)
    return {name: tuple(values[name]) for name in sorted(candidates) if name not in spoilt
            and all(_names_function(expr, module_functions, imports) for expr in values[name])}


def alias_calls(ctx, call: ast.Call) -> Optional[tuple]:
    """The calls ``call`` stands for where its callee is such a name (see the
    module docstring): one per function the name may hold, each with the
    call's own arguments at its place.  Kept per call on the module context,
    so every evaluation of it reads the same nodes."""
    func = call.func
    if type(func) is not ast.Name:
        return None
    found = ctx.__dict__.get("_alias_candidates")  # the module-level statements first: cheap
    if found is None:
        found = ctx._alias_candidates = module_level_aliases(ctx.tree, ctx.module_functions, ctx.imports)
    if func.id not in found:
        return None
    aliases = ctx.__dict__.get("_function_aliases")  # the whole module, once a candidate is called
    if aliases is None:
        aliases = ctx._function_aliases = function_aliases(ctx.tree, ctx.module_functions, ctx.imports)
    exprs = aliases.get(func.id)
    if not exprs:
        return None
    return _calls_kept(ctx.__dict__.setdefault("_alias_calls", {}), call, exprs)


def _calls_kept(made: dict, call: ast.Call, exprs) -> tuple:
    """The calls ``call`` stands for, one per expression its name may hold (:func:`_call_of`), made once per call
    and kept in ``made`` (a module's or a function's table)."""
    known = made.get(id(call))
    if known is not None and known[0] is call:
        return known[1]
    calls = tuple(_call_of(expr, call) for expr in exprs)
    made[id(call)] = (call, calls)
    return calls


def _call_of(expr: ast.AST, call: ast.Call) -> ast.Call:
    callee = _placed(expr, call.func)
    return ast.copy_location(ast.Call(func=callee, args=call.args, keywords=call.keywords), call)


def _placed(expr: ast.AST, at: ast.AST) -> ast.AST:
    """A copy of a name or dotted attribute, placed where ``at`` stands."""
    if type(expr) is ast.Attribute:
        node = ast.Attribute(value=_placed(expr.value, at), attr=expr.attr, ctx=ast.Load())
    else:
        node = ast.Name(id=expr.id, ctx=ast.Load())
    return ast.copy_location(node, at)


def _statements(body):
    """The statements of a body through its blocks (not into a definition's own body)."""
    for stmt in body:
        yield stmt
        kind = type(stmt)
        if kind in DEFINITIONS:
            continue
        for field in BLOCKS_OF[kind]:  # (body, orelse, finalbody, then the handlers' and the cases' bodies)
            inner = getattr(stmt, field)
            if field == "handlers" or field == "cases":
                for part in inner:
                    yield from _statements(part.body)
            else:
                yield from _statements(inner)


def _note_binding(stmt, values: dict, spoilt: set, only: Optional[set] = None) -> None:
    """Records what ``stmt`` binds at module level: a plain ``name = ref`` as
    a value of the name, any other binding as spoiling it."""
    kind = type(stmt)
    if kind is ast.Assign and len(stmt.targets) == 1 and type(stmt.targets[0]) is ast.Name:
        name = stmt.targets[0].id
        if only is None or name in only:
            values.setdefault(name, []).append(stmt.value)
        return
    if kind is ast.AnnAssign and type(stmt.target) is ast.Name and stmt.value is not None:
        name = stmt.target.id
        if only is None or name in only:
            values.setdefault(name, []).append(stmt.value)
        return
    bound: list = []
    if kind in TARGET_STATEMENTS:
        for target in statement_targets(stmt):
            bound.extend(n.id for n in walked(target) if type(n) is ast.Name)
    elif kind in (ast.Import, ast.ImportFrom):
        bound.extend(imported_names(stmt))
    elif kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
        bound.append(stmt.name)
    for name in bound:
        if only is None or name in only:
            spoilt.add(name)


def _names_function(expr: ast.AST, module_functions, imports) -> bool:
    kind = type(expr)
    if kind is ast.Name:
        return expr.id in module_functions or expr.id in imports
    if kind is ast.Attribute:
        text = dotted(expr)
        return bool(text) and "()" not in text and text.split(".")[0] in imports
    return False


#: the calls that read a module's function by its name, where it is there
_NAMED_READS = frozenset({"getattr"})


def probed_text(info, func: ast.expr) -> Optional[str]:
    """``module.attr`` where the callee is a local name of the function
    that holds a module's function picked by name (:func:`probed_functions`):
    ``index_of(0)`` after ``index_of = getattr(torch.cuda, "_index_of",
    None)`` calls ``torch.cuda._index_of`` (on the ranks past the test of the
    default, which every rank takes alike: the module is the same
    everywhere); None for any other callee.  What the call's text decides
    (a preset source, a query answered alike, a call that cannot raise) is
    read through it; which collective a call is stays with its own text."""
    if type(func) is not ast.Name or _NAMED_READS.isdisjoint(info.callee_names) \
            or func.id not in info.local_names:
        return None
    found = info.__dict__.get("_probed_functions")
    if found is None:
        found = info._probed_functions = probed_functions(info.func, info.params, info.ctx.imports)
    return found.get(func.id)


def probed_functions(func: ast.AST, params, imports) -> dict:
    """name -> ``module.attr`` for the local names of ``func`` every binding
    of which is ``name = getattr(module, "attr")`` or ``getattr(module,
    "attr", None)``, ``module`` an imported module or an attribute of one
    (``torch.cuda``): a feature probe, which holds the module's function
    where it has one and None where not.  A parameter, a name declared
    ``global``/``nonlocal``, or any other binding (another value, a loop,
    ``with``, an import, a definition, a walrus, ``del``) leaves the name
    out."""
    texts: dict = {}
    spoilt = {name.lstrip("*") for name in params}
    probes: set = set()
    stack = list(func.body) if type(func.body) is list else [func.body]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind in _DEFINITIONS or kind is ast.ClassDef:
            spoilt.add(node.name)
            continue
        if kind is ast.Lambda:
            continue
        if kind is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name:
            text = _probed_attribute(node.value, imports)
            if text is not None:
                name = node.targets[0].id
                probes.add(id(node.targets[0]))
                if texts.setdefault(name, text) != text:
                    spoilt.add(name)
        elif kind is ast.Name and type(node.ctx) is not ast.Load and id(node) not in probes:
            spoilt.add(node.id)
        elif kind in (ast.Global, ast.Nonlocal):
            spoilt.update(node.names)
        elif kind in (ast.Import, ast.ImportFrom):
            spoilt.update(imported_names(node))
        elif kind is ast.ExceptHandler and node.name:
            spoilt.add(node.name)
        read = CHILDREN[kind]
        if read is not None:
            stack += read(node)
    return {name: text for name, text in texts.items() if name not in spoilt}


def _probed_attribute(value: ast.expr, imports) -> Optional[str]:
    """``module.attr`` for ``getattr(module, "attr")`` or ``getattr(module,
    "attr", None)`` with ``module`` an imported module's dotted text."""
    if type(value) is not ast.Call or type(value.func) is not ast.Name or value.func.id not in _NAMED_READS \
            or value.keywords or not 2 <= len(value.args) <= 3:
        return None
    owner, name = value.args[0], value.args[1]
    if type(name) is not ast.Constant or type(name.value) is not str or not name.value.isidentifier():
        return None
    if len(value.args) == 3 and not (type(value.args[2]) is ast.Constant and value.args[2].value is None):
        return None
    text = dotted(owner)
    if not text or "()" in text or text.split(".")[0] not in imports:
        return None
    return text + "." + name.value


def local_alias_calls(info, call: ast.Call) -> Optional[tuple]:
    """The calls ``call`` stands for where its callee is a local name every
    binding of which in the function is a plain ``name = obj.method`` (a
    bound method: ``take = linker.take``), ``name = a.m if test else b.n``
    or ``name = getattr(obj, "method")``: one call of each attribute with
    the call's own arguments at its place, so ``taken = take(n)`` reads what
    ``linker.take(n)`` returns, whichever arm was bound.  The object named
    must be one the function never binds, or binds in one statement only
    (what it held when the alias was bound is what it holds at the call);
    its name and the alias's are neither ``global`` nor ``nonlocal``, no
    nested function or lambda may rebind them, and any other binding of
    the alias (a call's result, a loop, an unpacking, a ``with``, a
    ``del``) leaves the call as it was.  Kept per call on the function."""
    func = call.func
    if type(func) is not ast.Name or info.local_names is None or func.id not in info.local_names:
        return None
    table = info.__dict__.get("_local_aliases")
    if table is None:
        table = info.__dict__["_local_aliases"] = _local_aliases(info.func)
    exprs = table.get(func.id)
    if not exprs:
        return None
    return _calls_kept(info.__dict__.setdefault("_local_alias_calls", {}), call, exprs)


def _local_aliases(func) -> dict:
    """name -> the attribute expressions each binding of a local bound only to bound methods may hold."""
    values: dict = {}
    spoilt: set = set()  # names no plain statement of the function binds alone: neither alias nor owner
    not_aliases: set = set()  # names also bound to something other than a bound method (an owner may be one)
    stores: dict = {}  # name -> how many statements bind it
    params = {arg.arg for arg in ast.walk(func.args) if type(arg) is ast.arg} if hasattr(func, "args") else set()
    body = func.body if type(func.body) is list else [func.body]
    stack = list(body)
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind in DEFINITIONS:
            # a nested function or class may rebind what it names nonlocal: read nothing of those
            for inner in walked(node):
                if type(inner) is ast.Nonlocal or type(inner) is ast.Global:
                    spoilt.update(inner.names)
            continue
        if kind is ast.Global or kind is ast.Nonlocal:
            spoilt.update(node.names)
        elif kind is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name:
            name = node.targets[0].id
            stores[name] = stores.get(name, 0) + 1
            found = _bound_methods(node.value)
            if found is None:
                not_aliases.add(name)
            else:
                values.setdefault(name, []).extend(found)
            stack.append(node.value)
            continue
        elif kind is ast.Name and type(node.ctx) is not ast.Load:
            spoilt.add(node.id)
            stores[node.id] = stores.get(node.id, 0) + 2  # (a loop, an unpacking: not one value)
        elif kind is ast.NamedExpr:
            spoilt.add(node.target.id)
        read = CHILDREN[kind]
        if read is not None:
            stack += read(node)
    out = {}
    for name, exprs in values.items():
        if name in spoilt or name in not_aliases or name in params:
            continue
        owners = {_owner(expr) for expr in exprs}
        if all(owner is not None and owner not in spoilt and stores.get(owner, 0) <= (owner not in params)
               for owner in owners):
            out[name] = tuple(exprs)
    return out


def _bound_methods(value: ast.AST) -> Optional[list]:
    """The ``obj.method`` attributes ``value`` may be (an attribute of a plain or dotted name, either arm of an
    ``IfExp``, ``getattr(obj, "method")``), or None where it may be anything else."""
    kind = type(value)
    if kind is ast.Attribute:
        return [value] if _owner(value) is not None else None
    if kind is ast.IfExp:
        body, orelse = _bound_methods(value.body), _bound_methods(value.orelse)
        return None if body is None or orelse is None else body + orelse
    if kind is ast.Call and type(value.func) is ast.Name and value.func.id in _NAMED_READS \
            and len(value.args) == 2 and not value.keywords and type(value.args[1]) is ast.Constant \
            and type(value.args[1].value) is str and value.args[1].value.isidentifier():
        attribute = ast.copy_location(ast.Attribute(value=value.args[0], attr=value.args[1].value, ctx=ast.Load()),
                                      value)
        return [attribute] if _owner(attribute) is not None else None
    return None


def _owner(expr: ast.Attribute) -> Optional[str]:
    """The name a dotted attribute ``a.b.method`` starts from; None for anything else (a call's result)."""
    inner = expr.value
    while type(inner) is ast.Attribute:
        inner = inner.value
    return inner.id if type(inner) is ast.Name else None
