"""Exceptions of classes the tree defines, and who can catch them.

``except E`` catches an instance of ``E`` or of a subclass of it, nothing
else.  A handler that names only classes its own file defines
(``except _InputError:``), or imports from its own package, therefore
catches nothing a library, a builtin or this rank's local work raises (an
``OSError`` of a missing file, a CUDA error, a ``RuntimeError`` of a
library call): only exceptions the tree's
own ``raise`` statements make of such a class.  What decides that such a
handler runs is what decides that those statements are reached -- the
tests above them in the callees, a tree callee's own such raises passed
on -- never whether the local work in the ``try`` body failed
(:func:`own_classes_only`, read by ``Evaluator.raised_atoms``).

Each walker records, beside everything that decides that a function raises
(``Variant.raised``), what decides that it raises such an exception
(``Variant.raised_tree``): its ``raise`` statements of any class but a
builtin exception (a class named by a variable or imported from a library
counts: it might be one), a re-raise of what it caught (its ``try`` body's
own calls of the tree, read the same way), and what its tree callees raise
outside a handler.  The whole-tree pass reads a call's atom ``T``
(:func:`raised_tree_by`) over it.
"""

from __future__ import annotations

import ast
import builtins

from ..presets import KIND_DEVICE_ID
from .astwalk import DEFINITIONS, children_into, param_names, walk as fast_walk
from .atoms import RaisedBy, made
from .exits import BUILTIN_EXCEPTIONS, catches_everything
from .logs import logging_call
from .bindings import target_names
from .receivers import binding_statements, other_bindings
from .scope import canonical_text
from .syntax import dotted
from .unfailing import cannot_raise
from .vocabulary import (
    BUILTINS_FAILING_BY_ARGUMENTS, EXISTENCE_TESTS, HOST_TENSOR_FACTORIES, HOST_TENSOR_METHODS, INTROSPECTION_CALLS,
    LIBRARY_LOADS, LIKE_TENSOR_FACTORIES, NUMERIC_FILE_CALLS, NUMERIC_MODULES, SIZED_TENSOR_FACTORIES, TEXT_COMPUTATIONS,
    VIEW_METHODS,
)

def raised_tree_by(ref, path: str, line: int, text: str) -> RaisedBy:
    """Whether a call to an analysed function raises an exception of a class
    the tree defines (atom ``T``: the callee's ``Variant.raised_tree``)."""
    return made(RaisedBy, ("T", ref, path, line, text))


def may_raise_own_class(stmt: ast.Raise) -> bool:
    """Whether ``raise X(...)`` / ``raise X`` may raise an exception of a
    class the tree defines: ``X`` is not a builtin exception.  A bare
    ``raise`` re-raises what was caught: asked of the ``try`` body instead."""
    exc = stmt.exc
    if exc is None:
        return False
    named = exc.func if type(exc) is ast.Call else exc
    text = dotted(named)
    return not text or text not in BUILTIN_EXCEPTIONS


def exception_names(node) -> tuple:
    """The class names an ``except`` clause names (last dotted part), one
    per element of a tuple; None for an element that is no plain dotted name
    (``errors()``, ``*ERRORS``): a class known only at run time, which may
    be any, so a test that every class caught is of a kind fails on it,
    while the names beside it are still surely caught.  Empty for a bare
    ``except``."""
    if node is None:
        return ()
    parts = node.elts if isinstance(node, ast.Tuple) else [node]
    names = []
    for part in parts:
        text = dotted(part)
        names.append(None if not text or "()" in text else text.rsplit(".", 1)[-1])
    return tuple(names)


def _names(handler: ast.ExceptHandler):
    node = handler.type
    if node is None:
        return None
    parts = node.elts if type(node) is ast.Tuple else [node]
    names = []
    for part in parts:
        if type(part) is not ast.Name:
            return None
        names.append(part.id)
    return names


def project_class(name: str, ctx) -> bool:
    """Whether the name an ``except`` clause names is a class the tree
    defines: one defined at the top level of the file, or a name imported
    from a module of the file's own top-level package (``from
    pkg.moe.utils import PartialCaptureSignal`` in ``pkg.moe.layer``; a
    relative import resolves to one), the package also reached through the
    folder that holds it when that folder is a namespace package with no
    ``__init__.py`` (Megatron-core's ``core`` package, imported as
    ``megatron.core``).  A builtin exception never is."""
    if name in BUILTIN_EXCEPTIONS:
        return False
    if name in ctx.module_classes:
        return True
    target = ctx.imports.get(name)
    return bool(target) and of_own_package(target, ctx)


def of_own_package(target: str, ctx) -> bool:
    """Whether the dotted name ``target`` (a name in a module, ``pkg.moe.utils.f``) lies in the file's
    own top-level package, also reached through the folder that holds the package where that folder is a
    namespace package (:func:`project_class`); never for a file outside any package."""
    package, dot, _ = ctx.module.partition(".")
    if not (dot and "." in target):
        return False
    head, _, rest = target.partition(".")
    return head == package or (rest.partition(".")[0] == package and head == _folder_above(ctx, package))


def _folder_above(ctx, package: str) -> str:
    """The name of the folder that holds the file's top-level package, read
    off the file's path (``.../megatron/core/transformer/x.py`` in module
    ``core.transformer.x``: ``megatron``)."""
    parts = ctx.path.replace("\\", "/").split("/")
    depth = ctx.module.count(".") + 1 + (1 if parts[-1] == "__init__.py" else 0)
    if len(parts) <= depth or parts[-depth] != package:
        return ""
    return parts[-depth - 1]


def suppressing_handlers(info, stmt: ast.stmt) -> list:
    """The handlers (``except E: pass``) the ``contextlib.suppress(E)`` items of a ``with`` statement amount to
    around its body (:meth:`~cslint.analysis.exits.CallerCatches.suppressing`); empty for any other ``with``."""
    caught = info.ctx.caller_catches
    if not caught.suppressors:
        return []
    return [handler for item in stmt.items for handler in (caught.suppressing(item.context_expr),) if handler]


def own_classes_only(info, stmt) -> bool:
    """Whether every handler of every ``try`` around ``stmt`` (in its body,
    up to the function), and every ``with contextlib.suppress(E):``, names only classes the tree defines
    (:func:`project_class`): an exception from library code, a builtin or
    local work then leaves the function uncaught, and only the tree's own
    raises of such classes can send ``stmt``'s rank into a handler."""
    ctx = info.ctx
    child, parent = stmt, info.parents.get(id(stmt))
    found = False
    while parent is not None and parent is not info.func:
        kind = type(parent)
        handlers = parent.handlers if (kind is ast.Try or kind.__name__ == "TryStar") \
            and any(child is inner for inner in parent.body) else \
            suppressing_handlers(info, parent) if kind is ast.With or kind is ast.AsyncWith else ()
        if handlers:
            for handler in handlers:
                names = _names(handler)
                if not names or not all(project_class(name, ctx) for name in names):
                    return False
            found = True
        child, parent = parent, info.parents.get(id(parent))
    return found


def swallowed_here(info, stmt) -> bool:
    """Whether a ``raise X(...)`` or an ``assert`` in a ``try`` body of its
    own function is caught there and goes no further: a ``try`` around it
    has a handler that surely catches it (bare, ``Exception``,
    ``BaseException``, the raised class by name, ``AssertionError`` for an
    assert) and no handler of that ``try``, nor of any ``try`` between,
    raises anything itself.  The failure then takes the handler's path,
    which the graph and the summary walk follow (a flag it sets, a value
    it agrees); it is no raise of the function."""
    if type(stmt) is ast.Assert:
        raised = "AssertionError"
    elif type(stmt) is ast.Raise and stmt.exc is not None:
        named = dotted(stmt.exc.func if type(stmt.exc) is ast.Call else stmt.exc)
        if not named or "()" in named:
            return False
        raised = named.rsplit(".", 1)[-1]
    else:
        return False  # a bare re-raise leaves the handler it is in
    child, parent = stmt, info.parents.get(id(stmt))
    while parent is not None and parent is not info.func:
        if (type(parent) is ast.Try or type(parent).__name__ == "TryStar") and parent.handlers \
                and any(child is inner for inner in parent.body):
            if any(type(node) is ast.Raise for handler in parent.handlers
                   for part in handler.body for node in fast_walk(part)):
                return False
            for handler in parent.handlers:
                if catches_everything(handler) or raised in exception_names(handler.type):
                    return True
        child, parent = parent, info.parents.get(id(parent))
    return False


def library_call(func: ast.expr, info) -> bool:
    """Whether a call no function of the tree resolves runs library code
    alone: a builtin, or a name reached through an import
    (``torch.cuda.current_device()``).  A call of an object (``self.model(x)``,
    a parameter, a local) may run the tree's own code -- a module's
    ``forward`` behind its ``__call__`` -- which may raise the tree's classes."""
    head = func
    while type(head) is ast.Attribute:
        head = head.value
    if type(head) is not ast.Name:
        return False
    name, ctx = head.id, info.ctx
    if logging_call(func, info):
        return True
    if name in info.local_names or name in ctx.module_globals or name in ctx.module_classes:
        return False
    return name in ctx.imports or (head is func and name in vars(builtins))


def awaits_tree_call(node: ast.Await, info) -> bool:
    """Whether ``await`` runs the coroutine of a call the tree resolves
    (``await self.prepare(batch)``): what it raises is that function's own,
    which the call's atom ``E`` already stands for; awaiting anything else
    (a future, a library's coroutine) may fail on this rank alone."""
    value = node.value
    return type(value) is ast.Call and info.resolve_ref(value.func) is not None


def tree_calls_raise(info, stmts, path: str) -> tuple:
    """``(atoms, opaque)``: the atoms ``T`` of the calls of the tree in
    ``stmts`` (nested statements included, definitions left out), what
    decides that they raise an exception of a class the tree defines; and
    whether some other call there may run the tree's code
    (:func:`library_call`)."""
    out = set()
    opaque = False
    stack = list(stmts)
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind in DEFINITIONS:
            continue
        if kind is ast.Call:
            ref = info.resolve_ref(node.func)
            if ref is not None:
                out.add(raised_tree_by(ref, path, node.lineno, dotted(node.func) or "call"))
            elif not library_call(node.func, info):
                opaque = True
        children_into(node, stack)
    return frozenset(out), opaque


def tree_raised(info, calls, local: frozenset, line: int, text: str, stmt=None) -> frozenset:
    """What decides that a statement's ``calls`` (``CallInfo``) raise an
    exception of a class the tree defines, under handlers that catch only
    such classes (:func:`own_classes_only`): their callees' own raises
    (atoms ``T``); ``local`` where one may run the tree's code on this
    rank's data (a wrapped module's forward, an object's call) and cannot
    fail where it stands (``stmt``: ``unfailing.cannot_raise``)."""
    atoms = set()
    for call in calls:
        if call.match is not None:
            if call.match.spec is not None and call.match.spec.local_work:
                return local
            continue
        ref = info.resolve_ref(call.call.func)
        if ref is not None:
            atoms.add(raised_tree_by(ref, info.ctx.path, line, text))
        elif not library_call(call.call.func, info) and not (stmt is not None and cannot_raise(call.call, stmt, info)):
            return local
    return frozenset(atoms)


def reraised_tree(info, body, caught: frozenset) -> frozenset:
    """What decides that a bare ``raise`` in a handler of the ``try`` whose
    body is ``body`` re-raises an exception of a class the tree defines: the
    body's calls of the tree (their own such raises), and where the body
    raises one itself or calls what may run the tree's code, whatever made
    it raise (``caught``)."""
    tree, opaque = tree_calls_raise(info, body, info.ctx.path)
    if opaque:
        return tree | caught
    for stmt in body:
        for node in fast_walk(stmt):
            if type(node) is ast.Raise and (node.exc is None or may_raise_own_class(node)):
                return tree | caught
    return tree


def tree_raise(stmt: ast.Raise, implicit: frozenset, caught: list) -> frozenset:
    """What a ``raise`` statement adds to ``Variant.raised_tree`` under the
    implicit flow ``implicit``: nothing for a builtin exception; for a bare
    re-raise in a handler (``caught``: per handler being walked, what its
    ``try`` body raised and :func:`reraised_tree`), the tests around it and
    the body's tree raises in place of whatever the body's local work did."""
    if stmt.exc is None:
        if not caught:
            return implicit
        raised, tree = caught[-1]
        return (implicit - raised) | tree
    return implicit if may_raise_own_class(stmt) else frozenset()


def fails_by_operands(call, info, ctx) -> bool:
    """A builtin the module does not shadow (a builtin exception made for a
    ``raise`` too), loading a shared library, a log call (``logs.py``), a
    computation from the operands alone (:func:`computes_from_operands`), a test
    of whether a path names a file (``vocabulary.EXISTENCE_TESTS``), or a
    call the presets know to answer alike on every rank (a world size, the
    job's hardware: the setup it asks about is the job's): whether it fails
    follows its operands, alike on every rank given the same."""
    raw = call.raw
    if raw in BUILTINS_FAILING_BY_ARGUMENTS and raw not in info.local_names and raw not in ctx.module_functions:
        return True
    if raw in BUILTIN_EXCEPTIONS and raw not in info.local_names and raw not in ctx.module_classes:
        return True  # making the object fails nowhere; raising it is up to the ``raise``'s own tests
    if raw and raw.rsplit(".", 1)[-1] in LIBRARY_LOADS or logging_call(call.call.func, info):
        return True
    if computes_from_operands(call) or reads_host_tensor(call, info) or call.canonical in EXISTENCE_TESTS:
        return True  # (``os.path.exists(p)`` answers False where the disk fails it: only a ``p`` of another kind raises)
    return any(ctx.knowledge.is_uniform(text) for text in (call.canonical, raw) if text)


def device_named(atom) -> bool:
    """Whether an operand's atom is this rank's device id (a ``device id``
    source: ``torch.cuda.current_device()``, the device-management index of
    this rank's device): a device the runtime already found for this rank,
    so a call failing by its operands (a hardware query,
    :func:`fails_by_operands`) fails for it as for any other rank's device,
    of the same kind on nodes of one kind.  A rank id is no such operand: it
    may name a device the node does not have."""
    return atom.tag == "S" and atom.kind == KIND_DEVICE_ID


def computes_from_operands(call) -> bool:
    """A library call (``CallInfo``) that computes from its operands alone: a
    host-side numerical function (``np.linalg.lstsq``, not ``np.load``:
    ``vocabulary.NUMERIC_MODULES``) or a tensor made from them on the host
    (``torch.tensor(flags)``: ``vocabulary.HOST_TENSOR_FACTORIES``), or an
    introspection of its class or signature (``dataclasses.fields(sp)``:
    ``vocabulary.INTROSPECTION_CALLS``), or a computation on the text of a
    path, a pattern or a command line (``pathlib.Path("out")``,
    ``os.path.join(root, name)``: ``vocabulary.TEXT_COMPUTATIONS``).
    Whether it fails follows the operands, the same on every rank given
    the same."""
    canonical = call.canonical
    if not canonical:
        return False
    if canonical.startswith(NUMERIC_MODULES):
        return canonical.rsplit(".", 1)[-1] not in NUMERIC_FILE_CALLS
    if canonical in INTROSPECTION_CALLS or canonical in TEXT_COMPUTATIONS:
        return True
    if canonical in SIZED_TENSOR_FACTORIES:
        return _holds_no_elements(call.call, SIZED_TENSOR_FACTORIES[canonical])
    return canonical in HOST_TENSOR_FACTORIES and (_made_on_host(call.call) or _written_out(call.call))


def _holds_no_elements(call: ast.Call, position) -> bool:
    """Whether a sized tensor factory's call (``torch.empty(0, dtype=d)``,
    ``torch.zeros((0, 4))``, ``torch.full((0,), v)``) writes out its size as
    integer constants with a zero among them: the tensor holds no elements,
    so making it takes none of this rank's memory and fails only as its
    operands say.  ``position``: the index of the size argument, None where
    the positional arguments are the size."""
    if any(type(arg) is ast.Starred for arg in call.args) or any(kw.arg is None for kw in call.keywords):
        return False
    size = [kw.value for kw in call.keywords if kw.arg == "size"]
    if not size:
        if position is not None:
            size = call.args[position:position + 1]
        elif len(call.args) == 1 and type(call.args[0]) in (ast.Tuple, ast.List):
            size = [call.args[0]]
        else:
            size = list(call.args)
    if len(size) == 1 and type(size[0]) in (ast.Tuple, ast.List):
        size = size[0].elts
    return bool(size) and all(type(dim) is ast.Constant and type(dim.value) is int for dim in size) \
        and any(dim.value == 0 for dim in size)


#: the most elements a tensor written out in its factory's call may hold
WRITTEN_OUT_ELEMENTS = 8


def _written_out(call: ast.Call) -> bool:
    """Whether a tensor factory's call makes a tensor of a few constants
    written out in the call (``torch.tensor([1 if stop else 0],
    device=dev)``), on whatever device, nothing pinned: its size is the
    code's, a few bytes on every rank whatever the rank holds, so making
    it fails only where the device itself cannot be used -- set up alike
    for the job -- never on this rank's data."""
    if not call.args or len(call.args) > 2 or type(call.args[0]) not in (ast.List, ast.Tuple):
        return False
    elements = call.args[0].elts
    if not elements or len(elements) > WRITTEN_OUT_ELEMENTS or not all(map(_constant_valued, elements)):
        return False
    for keyword in call.keywords:
        if keyword.arg is None:
            return False
        if keyword.arg == "pin_memory" and not (type(keyword.value) is ast.Constant and not keyword.value.value):
            return False
    return True


def _constant_valued(node: ast.expr) -> bool:
    """A number written out, or a conditional expression that picks one
    (``1 if flag else 0``; its test is evaluated by calls of its own)."""
    kind = type(node)
    if kind is ast.Constant:
        return type(node.value) in (int, float, bool)
    if kind is ast.UnaryOp:
        return _constant_valued(node.operand)
    return kind is ast.IfExp and _constant_valued(node.body) and _constant_valued(node.orelse)


def _made_on_host(call: ast.Call) -> bool:
    """Whether a tensor factory's call names no device but the host
    (``device="cpu"``, ``torch.device("cpu")``), nor the device of another
    tensor, and does not pin the memory (``pin_memory=True``: page-locked
    memory is this node's own limited resource)."""
    if len(call.args) > 2:
        return False  # ``torch.as_tensor(data, dtype, device)``
    for keyword in call.keywords:
        if keyword.arg is None:
            return False  # ``**kwargs``: any device
        if keyword.arg == "pin_memory" and not (type(keyword.value) is ast.Constant and not keyword.value.value):
            return False
        if keyword.arg == "device":
            value = keyword.value
            if type(value) is ast.Call and len(value.args) == 1 and not value.keywords:
                value = value.args[0]  # ``torch.device("cpu")``
            if not (type(value) is ast.Constant and value.value == "cpu"):
                return False
    return True


def reads_host_tensor(call, info) -> bool:
    """A method of a tensor the function made on the host
    (:func:`host_tensor_method`), or a tensor made like one
    (:func:`host_tensor_like`): it fails as the tensor and the arguments
    say, the same on every rank given the same."""
    return host_tensor_method(call, info) or host_tensor_like(call, info)


def host_tensor_like(call, info) -> bool:
    """A factory call (``CallInfo``) that makes a tensor like one the
    function made on the host (``torch.empty_like(status)``, ``status``
    from :func:`host_tensor_names`; :data:`vocabulary.LIKE_TENSOR_FACTORIES`),
    named on no device but the host and not pinned (:func:`_made_on_host`):
    it allocates what that tensor holds, on the host, where making the
    tensor itself did not fail.  A tensor made like a parameter or a
    field (``torch.zeros_like(weight)``, as large as a layer's weights,
    maybe on a device) is not one."""
    args = call.call.args
    if call.canonical not in LIKE_TENSOR_FACTORIES or not args or type(args[0]) is not ast.Name:
        return False
    return _made_on_host(call.call) and args[0].id in host_tensor_names(info)


def host_tensor_method(call, info) -> bool:
    """A method call (``CallInfo``) that reads or computes from a tensor the
    function made on the host (:data:`vocabulary.HOST_TENSOR_METHODS` of a
    name :func:`host_tensor_names` gives: ``packed = torch.tensor(hits);
    ...; reduced = packed.tolist()``), or that makes a view of a library
    object or reads its shape (:func:`views_a_tensor`): no device, disk or
    peer takes part, so whether it fails follows the receiver and the
    arguments, the same on every rank given the same."""
    func = call.call.func
    if type(func) is not ast.Attribute:
        return False
    if func.attr in VIEW_METHODS:
        return views_a_tensor(call, info)
    if type(func.value) is not ast.Name or func.attr not in HOST_TENSOR_METHODS:
        return False
    return func.value.id in host_tensor_names(info)


def views_a_tensor(call, info) -> bool:
    """A method of :data:`vocabulary.VIEW_METHODS` (``x.view(-1)``,
    ``t.unsqueeze(1)``, ``t.dim()``) called on an object no function of the
    tree answers for (no method of the tree by that name resolves it): a
    tensor's metadata read or rewritten on the host, wherever its memory
    lies, which fails as the receiver's shape and the arguments say."""
    func = call.call.func
    return not any(type(arg) is ast.Starred for arg in call.call.args) and info.resolve_ref(func) is None


def host_tensor_names(info) -> frozenset:
    """Local names every binding of which is a plain assignment from a
    tensor factory that copies its operands on the host
    (:data:`vocabulary.HOST_TENSOR_FACTORIES`, no device but the host); a
    name bound any other way (a parameter, a loop, an unpacking, ``:=``,
    ``with ... as``) is left out, and a function with a ``case`` pattern
    has none.  Read from the statements alone, once per
    function."""
    found = info.__dict__.get("_host_tensors")
    if found is not None:
        return found
    statements = binding_statements(info)
    if statements is None or info.binds_in_expressions():  # a ``case`` pattern or a ``:=`` may bind any name
        info._host_tensors = frozenset()
        return info._host_tensors
    made: dict = {}  # name -> every binding so far makes a host tensor
    imports = info.ctx.imports
    for stmt in statements:
        if type(stmt) is ast.Assign:
            value = stmt.value
            host = len(stmt.targets) == 1 and type(value) is ast.Call \
                and canonical_text(dotted(value.func), imports) in HOST_TENSOR_FACTORIES \
                and _made_on_host(value)
            for target in stmt.targets:
                for name in target_names(target):
                    made[name] = made.get(name, True) and host and type(target) is ast.Name
        else:
            for name in (target_names(stmt.target) if type(stmt) is ast.AnnAssign else other_bindings(stmt)):
                made[name] = False
    params = param_names(info.func)
    found = info._host_tensors = frozenset(name for name, host in made.items() if host and name not in params)
    return found
