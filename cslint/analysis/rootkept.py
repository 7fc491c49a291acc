"""A broadcast's root keeps what it sent, through a helper of its module.

A function or method of the module that packs its parameters into one
payload (``payloads = (requests, extras)``, or the parameter itself) and
hands that payload to broadcasts rooted at one constant ``K``
(``Distributed.broadcast(payloads, root=0)``, or ``tp_cp_broadcast`` on the
first stage followed by a relay down the stages) returns, on the rank that
is the root, the payload it was given: each ``return`` hands back the
payload or such a broadcast of it, and every other binding of the payload is
such a broadcast or sits in an arm only later pipeline stages take (world
rank 0 lies in the first stage).  :func:`root_returned` reads that off the
syntax (``RootReturn``: the root and the parameters in payload order).

A caller that runs such a call only where this rank equals ``K`` and
leaves its result unused (``if rank == 0: _ = self._send(items)`` / ``else:
items = self._send(items)``) holds afterwards, in the names it passed, what
that call hands back on every rank: the dataflow reads the root's statement
as the assignment its other arm makes (:func:`root_kept_target`), so the
rank test no longer decides the names both arms bind alike."""

from __future__ import annotations

import ast
from typing import NamedTuple, Optional

from ..presets import KIND_RANK_ID
from .astwalk import DEFINITIONS, children_into
from .callfacts import payload_argument
from .callrefs import func_ref, method_ref, positional_params
from .neighbours import stage_end_test
from .roots import root_constant
from .scope import ModuleContext, canonical_text
from .syntax import dotted



class RootReturn(NamedTuple):
    """What a call hands back on its broadcasts' root: ``root`` the
    constant every broadcast of the payload names, ``parts`` the parameter
    names in payload order (a tuple packed from them), or one name (the
    payload is that parameter)."""

    root: int
    parts: object  # tuple of names, or one name


def root_returned(ctx: ModuleContext, ref) -> Optional[RootReturn]:
    """:class:`RootReturn` of a function or method (``ref``) of ``ctx``'s
    module, else None; worked out once per function."""
    tag = ref.tag
    if tag == "func" and ref.module == ctx.module:
        qualname = ref.qualname
    elif tag == "method" and ref.class_key.partition(":")[0] == ctx.module:
        qualname = f"{ref.class_key.partition(':')[2]}.{ref.name}"
    else:
        return None
    known = ctx.__dict__.setdefault("_root_returned", {})
    if qualname not in known:
        function = ctx.definitions().get(qualname)
        known[qualname] = None if function is None else _root_returned(ctx, function, "." in qualname)
    return known[qualname]


def _root_returned(ctx: ModuleContext, function, is_method: bool) -> Optional[RootReturn]:
    args = function.args
    if args.vararg or args.kwarg:
        return None
    params = positional_params(function, is_method)  # what a caller passes: no receiver (a classmethod's class)
    first = _first_statement(function)
    payload, parts = _packed(first, params)
    if payload is None:
        return None
    roots: set = set()
    parents: dict = {}
    stack = [function]
    while stack:
        node = stack.pop()
        for child in _children(node):
            parents[id(child)] = node
            stack.append(child)
        t = type(node)
        if t is ast.Name and type(node.ctx) is not ast.Load and node.id in (parts if type(parts) is tuple else (parts,)) \
                and node.id != payload:
            return None  # a parameter rebound: the payload may hold another object
        if t is ast.Return:
            if node.value is None or not _payload_or_broadcast(ctx, node.value, payload, roots):
                return None
        elif t is ast.Name and node.id == payload and type(node.ctx) is not ast.Load and node is not first.targets[0]:
            if not _root_rebinding(ctx, node, parents, payload, roots):
                return None
    if len(roots) != 1:
        return None
    return RootReturn(next(iter(roots)), parts)


def _children(node) -> list:
    out: list = []
    children_into(node, out)
    return [c for c in out if type(c) not in DEFINITIONS and not isinstance(c, ast.expr_context)]


def _packed(stmt, params: list) -> tuple:
    """``(payload name, parts)`` of ``payload = (a, b)`` (distinct
    parameters) or ``payload = a``; ``(None, None)`` otherwise."""
    if type(stmt) is not ast.Assign or len(stmt.targets) != 1 or type(stmt.targets[0]) is not ast.Name:
        return None, None
    value = stmt.value
    if type(value) is ast.Name and value.id in params:
        return stmt.targets[0].id, value.id
    if type(value) is ast.Tuple and value.elts and all(type(e) is ast.Name and e.id in params for e in value.elts):
        names = tuple(e.id for e in value.elts)
        if len(set(names)) == len(names) and stmt.targets[0].id not in names:
            return stmt.targets[0].id, names
    return None, None


def _broadcast_root(ctx: ModuleContext, value, payload: str) -> Optional[int]:
    """The root a broadcast call ``value`` of ``payload`` names, else None."""
    if type(value) is not ast.Call:
        return None
    raw = dotted(value.func)
    match = ctx.match_collective(value, raw, canonical_text(raw, ctx.imports)) if raw else None
    if match is None or match.spec is None or match.spec.root_arg is None:
        return None
    sent = payload_argument(value, match.spec)
    if type(sent) is not ast.Name or sent.id != payload:
        return None
    return root_constant(value, match.spec)


def _payload_or_broadcast(ctx: ModuleContext, value, payload: str, roots: set) -> bool:
    if type(value) is ast.Name and value.id == payload:
        return True
    root = _broadcast_root(ctx, value, payload)
    if root is None:
        return False
    roots.add(root)
    return True


def _root_rebinding(ctx: ModuleContext, target: ast.Name, parents: dict, payload: str, roots: set) -> bool:
    """Whether a binding of the payload leaves what the root holds as it was:
    ``payload = broadcast(payload, root=K)`` (the root gets back what it
    sent), or any binding in an arm only stages past the first take (world
    rank 0, the root, lies in the first stage: ``K`` must be 0)."""
    stmt = parents.get(id(target))
    if type(stmt) is ast.Assign and stmt.targets == [target]:
        root = _broadcast_root(ctx, stmt.value, payload)
        if root is not None:
            roots.add(root)
            return True
    child, parent = target, stmt
    while parent is not None:
        if type(parent) is ast.If:
            tested = stage_end_test(parent.test)
            if tested is not None and tested[0] == "first" and \
                    any(child is s for s in (parent.orelse if tested[1] else parent.body)):
                roots.add(0)
                return True
        child, parent = parent, parents.get(id(parent))
    return False


def root_kept_target(ctx: ModuleContext, call: ast.Call, ref) -> Optional[ast.expr]:
    """The target ``names = call`` that a call of ``ref`` (a
    :func:`root_returned` function of the module) binds on its root: the
    plain names it passes for the payload's parameters, as a tuple where the
    payload packs several (``Tuple`` of ``Name``), one ``Name`` otherwise;
    None where an argument is not a plain name or is spread.  The root the
    call needs is :func:`root_returned`'s."""
    found = root_returned(ctx, ref)
    if found is None or any(type(a) is ast.Starred for a in call.args):
        return None
    target = ctx.definitions()[ref.qualname if ref.tag == "func" else f"{ref.class_key.partition(':')[2]}.{ref.name}"]
    params = positional_params(target, ref.tag != "func")
    passed = {params[i]: arg for i, arg in enumerate(call.args) if i < len(params)}
    passed.update((kw.arg, kw.value) for kw in call.keywords if kw.arg is not None)
    names = found.parts if type(found.parts) is tuple else (found.parts,)
    nodes = [passed.get(name) for name in names]
    if any(type(node) is not ast.Name for node in nodes):
        return None
    if type(found.parts) is not tuple:
        return ast.Name(id=nodes[0].id, ctx=ast.Store())
    return ast.Tuple(elts=[ast.Name(id=n.id, ctx=ast.Store()) for n in nodes], ctx=ast.Store())


def rank_equal_side(evaluator, test: ast.expr, env: dict) -> Optional[tuple]:
    """``(K, side)`` of a test comparing a rank id with the constant ``K``:
    the side of the ``if`` on which this rank equals ``K`` (True for
    ``rank == K``, False for ``rank != K``); None for any other test."""
    if type(test) is not ast.Compare or len(test.ops) != 1 or type(test.ops[0]) not in (ast.Eq, ast.NotEq):
        return None
    left, right = test.left, test.comparators[0]
    if type(left) is ast.Constant:
        left, right = right, left
    if type(right) is not ast.Constant or type(right.value) is not int or type(right.value) is bool:
        return None
    if not any(a.tag == "S" and a.kind == KIND_RANK_ID for a in evaluator.eval(left, env)):
        return None
    return right.value, type(test.ops[0]) is ast.Eq


def root_arm_assigns_alike(ctx: ModuleContext, info, evaluator, decision: ast.If, stmt: ast.stmt,
                           others: list, others_in_body: bool) -> bool:
    """Whether ``stmt``, in one arm of ``decision`` (``names = f(args)``),
    is the assignment the other arm makes on the root where that arm runs
    only where this rank equals the root of ``f``'s broadcasts and calls
    ``f`` alike, leaving the result aside (:func:`root_kept_target`):
    ``others`` are the other arm's statements at the same place, in the
    ``if``'s body where ``others_in_body``."""
    if type(stmt) is not ast.Assign or len(stmt.targets) != 1 or type(stmt.value) is not ast.Call:
        return False
    call = stmt.value
    callee, args = ast.unparse(call.func), [ast.unparse(a) for a in call.args]
    target = ast.unparse(stmt.targets[0])
    for other in others:
        value = other.value if type(other) in (ast.Expr, ast.Assign) else None
        if type(value) is not ast.Call or ast.unparse(value.func) != callee or \
                [ast.unparse(a) for a in value.args] != args:
            continue
        if type(other) is ast.Assign and any(type(t) is not ast.Name or t.id != "_" for t in other.targets):
            continue  # the root binds the result itself
        ref = info.resolve_ref(value.func)
        if ref is None or ref.tag not in ("func", "method"):
            continue
        kept = root_kept_target(ctx, value, ref)
        if kept is None or ast.unparse(kept) != target:
            continue
        side = rank_equal_side(evaluator, decision.test, {})
        if side is not None and side[0] == root_returned(ctx, ref).root and side[1] == others_in_body:
            return True
    return False


def has_root_returns(ctx: ModuleContext) -> bool:
    """Whether some function or method of the module is :func:`root_returned`:
    worked out once per file, so that a file without one asks nothing more."""
    found = ctx.__dict__.get("_has_root_returns")
    if found is None:
        found = ctx.__dict__["_has_root_returns"] = any(
            _packs_first(function) and root_returned(ctx, func_ref(ctx.module, q) if "." not in q else
                                                     method_ref(f"{ctx.module}:{q.partition('.')[0]}",
                                                                q.partition(".")[2])) is not None
            for q, function in ctx.definitions().items())
    return found


def _packs_first(function) -> bool:
    """Whether the first statement past a docstring assigns one name (what
    :func:`_packed` then reads), the cheap test that rules out most functions."""
    first = _first_statement(function)
    return type(first) is ast.Assign and len(first.targets) == 1 and type(first.targets[0]) is ast.Name


def _first_statement(function) -> Optional[ast.stmt]:
    """The first statement of ``function`` past its docstring; None where there is none."""
    body = function.body
    first = body[0] if body else None
    if type(first) is ast.Expr and type(first.value) is ast.Constant:
        first = body[1] if len(body) > 1 else None
    return first
