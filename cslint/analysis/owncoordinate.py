"""A group a rank picks by its own coordinate from a table of groups built
over the ranks that share each coordinate.

A helper of the module builds one group per coordinate and keeps it under
a key made of that coordinate::

    def node_groups():
        groups = {}
        for i in range(dist.get_world_size() // PER_NODE):
            groups[f"node_{i}"] = dist.new_group(ranks=[j + PER_NODE * i for j in range(PER_NODE)])
        return groups

and a function picks ``groups[f"node_{dist.get_rank() // PER_NODE}"]``.
The members of the group under ``node_{i}`` are ``PER_NODE * i + j`` for
``0 <= j < PER_NODE``, and each of them computes ``rank // PER_NODE == i``:
every member of the group a rank picks picks that same group, by the same
arithmetic on its own id, and a rank outside it picks another group (or no
entry at all, and fails alone, waited for by no member).  So which group a
rank holds is no decision over the group it runs a collective on: the pick
is the group's own, as ``new_group(ranks)`` under ``if rank in ranks`` is.
The other coordinate is read alike: ``[i + PER_NODE * j for j in range(n)]``
under ``for i in range(PER_NODE)`` holds the ranks with ``rank % PER_NODE
== i``.

Only what the syntax guarantees on every rank counts (:func:`picks_own_coordinate`):

- the function is one of the module's own or a method of a class of it
  (nested in no function, whose names it could read instead of the
  module's); the table is a local it binds once, to a call with no arguments
  of a function the module defines once at its top level, undecorated,
  whose body is ``table = {}``, then loops ``for i in range(n):`` holding
  only ``members = <ranks>`` (optional) and ``table[<key of i>] =
  new_group(<ranks>)``, then ``return table``; the local is read nowhere
  but as the container of a subscript (no store into it, no method of it,
  never handed on), in the function and in what it nests;
- the ranks are a comprehension ``[j + P * i for j in range(P)]`` (the
  coordinate ``rank // P``) or ``[i + P * j for j in range(m)]`` under
  ``for i in range(P)`` (``rank % P``), either order of the terms and
  factors, with ``P`` a positive int written out or a module constant bound
  once at the top level to one, rebound nowhere (no ``global`` of it, no
  local of that name in either function);
- a key is ``i`` itself (one loop only) or an f-string whose only
  replacement field is ``{i}``, last, and no key's text before it is the
  start of another's (``f"a{i}"`` and ``f"a1{i}"`` meet at ``"a11"``);
- the pick's key is the same f-string (or name) around the coordinate of
  this rank's world id, ``dist.get_rank()`` with no group (``rank // P``,
  ``int(rank / P)``, ``rank % P``), directly or through locals the function
  binds once.

A table handed in (a parameter, a field, a global) is not read: a caller
may build it otherwise.
"""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import DEFINITIONS, walk
from .bindings import local_assignments
from .namereach import bound_names
from .scope import canonical_text
from .syntax import dotted

#: the coordinate of a rank's world id each member list shares: its quotient by P, its remainder
_QUOTIENT, _REMAINDER = "quotient", "remainder"

_NEW_GROUP = "torch.distributed.new_group"
_GET_RANK = "torch.distributed.get_rank"


def picks_own_coordinate(ctx, func, pick: ast.Subscript) -> bool:
    """Whether ``pick``, in ``func`` of the module of ``ctx``, reads the
    group of this rank's own coordinate from a table of groups built per
    coordinate (see the module's doc): every member of the group it picks
    picks the same one."""
    table = pick.value
    if type(table) is not ast.Name or type(pick.ctx) is not ast.Load or not _read_only_as_container(func, table.id):
        return False
    if not any(node is func for node in ctx.definitions().values()):
        return False  # (a nested function reads its enclosing function's names: the helper, P or ``dist`` may be those)
    built = _bound_once(func, table.id)
    if type(built) is not ast.Call or built.args or built.keywords or type(built.func) is not ast.Name:
        return False
    helper = _module_function(ctx.tree, built.func.id)
    if helper is None or _binds(func, built.func.id):
        return False
    entries = _coordinate_entries(ctx, helper)
    if not entries:
        return False
    key = _key(pick.slice)
    if key is None:
        return False
    template, inner = key
    coordinate = _coordinate_of_rank(ctx, func, inner)
    if coordinate is None:
        return False
    kind, modulus = coordinate
    if not _constant_modulus(ctx, modulus, (func, helper)):
        return False
    return any(entry == (template, kind, _modulus_value(ctx, modulus)) for entry in entries)


def _coordinate_entries(ctx, helper) -> list:
    """``[(key template, coordinate kind, P), ...]`` of the table ``helper``
    builds and returns, or [] where it is no such table."""
    body = helper.body
    if len(body) < 3 or type(body[0]) is not ast.Assign or len(body[0].targets) != 1:
        return []
    target = body[0].targets[0]
    if type(target) is not ast.Name or type(body[0].value) is not ast.Dict or body[0].value.keys:
        return []
    table = target.id
    last = body[-1]
    if type(last) is not ast.Return or type(last.value) is not ast.Name or last.value.id != table:
        return []
    mentions = [node for node in walk(helper) if type(node) is ast.Name and node.id == table]
    if len(mentions) != len(body) or any(type(node) is ast.NamedExpr for node in walk(helper)):
        return []  # (the table named only where it is made, stored into and returned; no ``:=`` rebinding a key)
    entries = []
    for loop in body[1:-1]:
        entry = _loop_entry(ctx, helper, loop, table)
        if entry is None:
            return []
        entries.append(entry)
    templates = [template for template, _kind, _modulus in entries]
    if None in templates and len(entries) > 1:
        return []
    prefixes = [template for template in templates if template is not None]
    if any(i != k and b.startswith(a) for i, a in enumerate(prefixes) for k, b in enumerate(prefixes)):
        return []  # (``f"a{i}"`` and ``f"a1{i}"`` both write ``"a11"``; the same text twice, the same keys)
    return entries


def _loop_entry(ctx, helper, loop, table: str) -> Optional[tuple]:
    """``(key template, coordinate kind, P)`` of ``for i in range(n): [members = <ranks>;]
    table[<key>] = new_group(<ranks>)``, else None."""
    if type(loop) is not ast.For or loop.orelse or type(loop.target) is not ast.Name or not _range_of(ctx, loop.iter):
        return None
    index = loop.target.id
    body = loop.body
    store = body[-1]
    if len(body) > 2 or type(store) is not ast.Assign or len(store.targets) != 1:
        return None
    target = store.targets[0]
    if type(target) is not ast.Subscript or type(target.value) is not ast.Name or target.value.id != table:
        return None
    key = _key(target.slice)
    if key is None or type(key[1]) is not ast.Name or key[1].id != index:
        return None
    ranks = _new_group_ranks(ctx, store.value)
    if ranks is None:
        return None
    if len(body) == 2:
        first = body[0]
        if type(first) is not ast.Assign or len(first.targets) != 1 or type(first.targets[0]) is not ast.Name:
            return None
        held = first.targets[0].id
        if type(ranks) is not ast.Name or ranks.id != held or held in (index, table):
            return None
        ranks = first.value
    members = _members(ctx, ranks, index)
    if members is None:
        return None
    kind, modulus = members
    if kind == _REMAINDER and not _same_modulus(ctx, loop.iter.args[0], modulus):
        return None  # (the remainder is the loop's index only while the index stays under P)
    if not _constant_modulus(ctx, modulus, (helper,)) or _binds(helper, "range") or _binds(helper, _head(store.value)):
        return None
    return key[0], kind, _modulus_value(ctx, modulus)


def _members(ctx, ranks, index: str) -> Optional[tuple]:
    """``(kind, P)`` of ``[j + P * i for j in range(P)]`` (the quotient) or
    ``[i + P * j for j in range(m)]`` (the remainder), ``i`` being ``index``."""
    if type(ranks) is not ast.ListComp or len(ranks.generators) != 1:
        return None
    generator = ranks.generators[0]
    if generator.ifs or generator.is_async or type(generator.target) is not ast.Name \
            or not _range_of(ctx, generator.iter):
        return None
    inner = generator.target.id
    if inner == index:
        return None
    element = ranks.elt
    if type(element) is not ast.BinOp or type(element.op) is not ast.Add:
        return None
    for alone, product in ((element.left, element.right), (element.right, element.left)):
        if type(alone) is not ast.Name or type(product) is not ast.BinOp or type(product.op) is not ast.Mult:
            continue
        for factor, modulus in ((product.left, product.right), (product.right, product.left)):
            if type(factor) is not ast.Name:
                continue
            if alone.id == inner and factor.id == index and _same_modulus(ctx, generator.iter.args[0], modulus):
                return _QUOTIENT, modulus
            if alone.id == index and factor.id == inner:
                return _REMAINDER, modulus
    return None


def _coordinate_of_rank(ctx, func, expr) -> Optional[tuple]:
    """``(kind, P)`` of ``rank // P``, ``int(rank / P)`` or ``rank % P`` of this
    rank's world id, through locals ``func`` binds once; else None."""
    expr = _through_local(func, expr)
    if type(expr) is ast.Call and type(expr.func) is ast.Name and expr.func.id == "int" and len(expr.args) == 1 \
            and not expr.keywords and _builtin(ctx, func, "int"):
        inner = expr.args[0]
        if type(inner) is ast.BinOp and type(inner.op) is ast.Div and _world_rank(ctx, func, inner.left):
            return _QUOTIENT, inner.right
        return None
    if type(expr) is not ast.BinOp or not _world_rank(ctx, func, expr.left):
        return None
    if type(expr.op) is ast.FloorDiv:
        return _QUOTIENT, expr.right
    if type(expr.op) is ast.Mod:
        return _REMAINDER, expr.right
    return None


def _world_rank(ctx, func, expr) -> bool:
    """``dist.get_rank()`` of torch with no group, directly or through a local bound once."""
    expr = _through_local(func, expr)
    if type(expr) is not ast.Call or expr.args or expr.keywords:
        return False
    return canonical_text(dotted(expr.func), ctx.imports) == _GET_RANK and not _binds(func, _head(expr))


def _new_group_ranks(ctx, call) -> Optional[ast.expr]:
    """The rank list handed to torch's ``new_group``, else None."""
    if type(call) is not ast.Call or canonical_text(dotted(call.func), ctx.imports) != _NEW_GROUP:
        return None
    if call.args:
        return call.args[0]
    return next((keyword.value for keyword in call.keywords if keyword.arg == "ranks"), None)


def _key(key) -> Optional[tuple]:
    """``(template, replaced)`` of a key: a name (template None), or an
    f-string whose one replacement field, plain and last, holds ``replaced``
    (template: the text before it)."""
    if type(key) is ast.Name:
        return None, key
    if type(key) is not ast.JoinedStr or not key.values:
        return None
    *head, last = key.values
    if type(last) is not ast.FormattedValue or last.conversion != -1 or last.format_spec is not None:
        return None
    if any(type(part) is not ast.Constant or type(part.value) is not str for part in head):
        return None
    return "".join(part.value for part in head), last.value


def _through_local(func, expr):
    """What a local ``expr`` names was bound to, where ``func`` binds it once; else ``expr``."""
    seen = 0
    while type(expr) is ast.Name and seen < 3:
        bound = _bound_once(func, expr.id)
        if bound is None:
            return expr
        expr, seen = bound, seen + 1
    return expr


def _bound_once(func, name: str) -> Optional[ast.expr]:
    """The value of the one binding of the local ``name`` in ``func`` (a plain
    assignment; no other store of the name in it or what it nests, no
    ``global``/``nonlocal`` of it), else None."""
    assignments = local_assignments(func, name)
    if not assignments or len(assignments) != 1:
        return None
    stores = 0
    for node in walk(func):
        t = type(node)
        if t is ast.Name and node.id == name and type(node.ctx) is not ast.Load:
            stores += 1
        elif (t is ast.Global or t is ast.Nonlocal) and name in node.names:
            return None
        elif t is ast.arg and node.arg == name:
            return None
    return assignments[0][1] if stores == 1 else None


def _read_only_as_container(func, name: str) -> bool:
    """Whether every read of ``name`` in ``func`` is the container of a subscript it reads."""
    containers = {id(node.value) for node in walk(func) if type(node) is ast.Subscript and type(node.ctx) is ast.Load}
    return all(id(node) in containers for node in walk(func)
               if type(node) is ast.Name and node.id == name and type(node.ctx) is ast.Load)


def _binds(func, name: str) -> bool:
    """Whether ``func`` or what it nests binds ``name`` in any way (a parameter too) or declares it global."""
    return name in bound_names(func) or any(type(node) is ast.arg and node.arg == name for node in walk(func))


def _module_function(tree, name: str):
    """The undecorated, synchronous function ``name`` the module defines at its
    top level and binds nowhere else, else None."""
    found = _module_bindings(tree, name)
    if len(found) != 1 or type(found[0]) is not ast.FunctionDef or found[0].decorator_list:
        return None
    return found[0]


def _module_bindings(tree, name: str) -> list:
    """The top-level statements of the module binding ``name`` (a definition by
    its name, any other statement anywhere in it), or [None] where some
    function declares ``name`` global (any of them may rebind it)."""
    if any(type(node) is ast.Global and name in node.names for node in walk(tree)):
        return [None]
    return [node for node in tree.body if (node.name == name if type(node) in DEFINITIONS
                                           else name in bound_names(node))]


def _constant_modulus(ctx, modulus, functions) -> bool:
    """Whether ``modulus`` is a positive int written out, or a module constant
    bound once at the top level to one and rebound nowhere (nor a local of ``functions``)."""
    return _modulus_value(ctx, modulus) is not None and not (
        type(modulus) is ast.Name and any(_binds(function, modulus.id) for function in functions))


def _modulus_value(ctx, modulus) -> Optional[int]:
    """The positive int ``modulus`` writes out or names (a module constant, see :func:`_constant_modulus`)."""
    if type(modulus) is ast.Name:
        found = _module_bindings(ctx.tree, modulus.id)
        if len(found) != 1 or type(found[0]) is not ast.Assign or len(found[0].targets) != 1 \
                or type(found[0].targets[0]) is not ast.Name:
            return None
        modulus = found[0].value
    if type(modulus) is not ast.Constant:
        return None
    value = modulus.value
    return value if type(value) is int and value > 0 else None


def _same_modulus(ctx, a, b) -> bool:
    """Whether two texts are the same positive int (written out or a module constant)."""
    first, second = _modulus_value(ctx, a), _modulus_value(ctx, b)
    return first is not None and first == second


def _range_of(ctx, call) -> bool:
    """``range(n)``: one argument, the builtin (the module binds no ``range``)."""
    return type(call) is ast.Call and type(call.func) is ast.Name and call.func.id == "range" \
        and len(call.args) == 1 and not call.keywords and not _module_bindings(ctx.tree, "range")


def _builtin(ctx, func, name: str) -> bool:
    """Whether ``name`` read in ``func`` is the builtin: neither the module nor ``func`` binds it."""
    return not _module_bindings(ctx.tree, name) and not _binds(func, name)


def _head(call) -> str:
    """The name a call's dotted callee starts from (``dist`` of ``dist.new_group(...)``)."""
    return (dotted(call.func) or "").partition(".")[0]
