"""Modules wrapped for data parallelism (``DistributedDataParallel``,
``FullyShardedDataParallel``, ``fully_shard``: the presets'
``data_parallel_wrappers``).  Calling one runs its forward, which
communicates (parameter all-gathers, buffer broadcasts) on this rank's own
batch; the backward of what it computed all-reduces the gradients.  Which
names of a function hold such a module: its own wrappings, the fields its
class's methods wrap, and the fields a function of the file wraps on an
object it receives."""

from __future__ import annotations

import ast
from typing import Optional

from ..presets import CollectiveSpec, fnmatch_any, group_from_text
from .astwalk import own_nodes, param_names, positional_parameters, walk as fast_walk, walked
from .callrefs import first_positional_param
from .localgroups import local_group, param_with_fallback, receiver_group
from .records import CollectiveMatch
from .collectivegroups import runs_over_receiver
from .scope import canonical_text
from .syntax import dotted, unparse


#: What calling a module wrapped for data parallelism issues: its forward
#: (communicates; its output is this rank's, computed from its own batch) and
#: the backward of a value computed from that output (the gradient all-reduce).
#: The forward also runs the module's own code on this rank's batch, which can
#: fail on one rank only (a batch the model refuses): local work, as a
#: framework's training loop (``CollectiveSpec.local_work``).
WRAPPED_FORWARD = CollectiveSpec("<module wrapped for data parallelism>", "torch", result="local", local_work=True)
WRAPPED_BACKWARD = CollectiveSpec("<backward through a data-parallel module>", "torch", result="uniform")


def match_call(info, call: ast.Call, raw: Optional[str], canon: Optional[str]):
    """The :class:`CollectiveMatch` of a call: a preset or configured
    collective, or a call of a module this function wrapped for data
    parallelism (``model = DistributedDataParallel(m); model(batch)``) and
    the ``backward()`` of what it computed; None otherwise."""
    match = info.ctx.match_collective(call, raw, canon) if raw else None
    if match is None and raw and raw.startswith("super()."):
        match = inherited_collective(info, call, raw)
    if match is not None:
        group = match.group
        if runs_over_receiver(info.ctx, call, match):
            return match._replace(group=receiver_group(info, call) or group)
        if group.startswith("group:"):
            head, dot, rest = group[6:].partition(".")  # a group's own attributes are that group
            local = local_group(info, head) if head.isidentifier() and head != "self" else None
            if local is not None:
                return match._replace(group=local)
            param = param_with_fallback(info, head)
            if param is not None:
                return match._replace(group=f"group:{param}{dot}{rest}")
        return match
    if not raw or not imports_a_wrapper(info.ctx):
        return match
    models, outputs = wrapped_models(info)
    if raw in models:
        return CollectiveMatch("forward", models[raw][0], "torch", WRAPPED_FORWARD)
    receiver, _, name = raw.rpartition(".")
    if name == "backward" and receiver in outputs:
        return CollectiveMatch("backward", outputs[receiver], "torch", WRAPPED_BACKWARD)
    if receiver in models and (name == "forward" or name in models[receiver][1]):
        return CollectiveMatch(name, models[receiver][0], "torch",
                               WRAPPED_FORWARD if name == "forward" else WRAPPED_BACKWARD)
    return None


def inherited_collective(info, call: ast.Call, raw: str):
    """The :class:`CollectiveMatch` of ``super().name(...)`` in a method of
    a class derived from a library class: that class's ``name``
    (``super().__iter__()`` in a ``DataLoader`` subclass is
    ``torch.utils.data.DataLoader.__iter__``).  Only the library bases
    listed before any base of the file count: a base of the file may
    define ``name`` itself, and the resolver follows it."""
    ctx = info.ctx
    if not info.class_key:
        return None
    for base in ctx.class_bases.get(info.class_key, ()):
        if base in ctx.module_classes:
            return None
        match = ctx.match_collective(call, raw, base + raw[len("super()"):])
        if match is not None:
            return match
    return None


def wrapped_models(info) -> tuple:
    """({text: (group, methods)} of the modules wrapped for data parallelism
    -- the function's own locals and the fields (``self.model``) its class's
    methods assign a wrapper to --, {local name: group} of the values
    computed from calling them), from assignments (``fully_shard(m)`` wraps
    ``m`` in place)."""
    if info._wrapped is not None:
        return info._wrapped
    ctx = info.ctx
    models = {}
    if info.self_name and info.class_key:
        for attr, wrapped in wrapped_fields(ctx, info.class_key).items():
            models[f"{info.self_name}.{attr}"] = wrapped
    received = [p.lstrip("*") for p in info.params if p.lstrip("*") != info.self_name]
    if received:
        for attr, wrapped in wrapped_received_fields(ctx).items():
            for name in received:
                models[f"{name}.{attr}"] = wrapped
    if info.class_key is None and "." not in info.qualname:
        models.update(wrapped_params(ctx).get(info.qualname, {}))
    models.update(_wrapped_locals(ctx, info.func))
    outputs: dict = {}
    # a value computed from a wrapped module needs one to call (most functions have none)
    assignments = [(node.targets[0].id, node.value) for node in own_nodes(info.func)
                   if isinstance(node, ast.Assign) and len(node.targets) == 1
                   and isinstance(node.targets[0], ast.Name)] if models else ()
    changed = True
    while changed:
        changed = False
        for name, value in assignments:
            if name in outputs:
                continue
            for sub in fast_walk(value):
                found = None
                if isinstance(sub, ast.Call) and dotted(sub.func) in models:
                    found = models[dotted(sub.func)][0]
                elif isinstance(sub, ast.Name) and sub.id in outputs:
                    found = outputs[sub.id]
                if found is not None:
                    outputs[name] = found
                    changed = True
                    break
    info._wrapped = (models, outputs)
    return info._wrapped


def imports_a_wrapper(ctx) -> bool:
    """Whether the file imports a data-parallel wrapper by name (``from
    torch.nn.parallel import DistributedDataParallel``): only then are its
    modules' wrappings looked for (a wrapper reached as ``torch.nn.parallel.
    DistributedDataParallel`` without an import is not)."""
    found = ctx.__dict__.get("_imports_a_wrapper")
    if found is None:
        tails = {pattern.rsplit(".", 1)[-1] for pattern, _ in ctx.knowledge.data_parallel_wrappers}
        found = any(canon.rsplit(".", 1)[-1] in tails for canon in ctx.imports.values()) \
            or bool(partitioning_withs(ctx))
        ctx.__dict__["_imports_a_wrapper"] = found
    return found


def partitioning_withs(ctx) -> dict:
    """{id(with statement): (group, methods)} of the file's ``with``
    statements that enter a partitioning context of the presets (``with
    deepspeed.zero.Init():``), looked for only in files importing the
    context's top package; computed once per file."""
    found = ctx.__dict__.get("_partitioning_withs")
    if found is not None:
        return found
    found = {}
    contexts = ctx.knowledge.partitioning_contexts
    heads = {pattern.split(".", 1)[0] for pattern, _ in contexts}
    if contexts and any(canon.split(".", 1)[0] in heads for canon in ctx.imports.values()):
        for node in fast_walk(ctx.tree):
            if isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    call = item.context_expr
                    raw = dotted(call.func) if isinstance(call, ast.Call) else None
                    canon = canonical_text(raw, ctx.imports) if raw else None
                    methods = next((tuple(m) for pattern, m in contexts if canon and fnmatch_any(canon, [pattern])),
                                   None)
                    if methods is not None:
                        found[id(node)] = ("world", methods)
                        break
    ctx.__dict__["_partitioning_withs"] = found
    return found


def file_builders(ctx) -> dict:
    """{function name: (group, methods)} of the module-level functions of
    the file that return a module wrapped for data parallelism (``return
    FullyShardedDataParallel(m)``, ``fully_shard(m); return m``, a module
    built under a partitioning context): what a call of one returns is that
    wrapped module, wherever the file keeps it (a local, a field).  Only a
    builder's own wrappings count (a builder calling another is not
    followed); computed once per file."""
    found = ctx.__dict__.get("_file_builders")
    if found is not None:
        return found
    found = {}
    for node in ctx.tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            returned = _find_wrapped_locals(ctx, node, {})[1]
            if returned is not None:
                found[node.name] = returned
    ctx.__dict__["_file_builders"] = found
    return found


def wrapped_params(ctx) -> dict:
    """{function name: {parameter: (group, methods)}} of the module-level
    functions of the file that a call in the file hands a wrapped module
    (``model = build(config); decode(model, ids)``, ``decode(build(config))``,
    ``decode(self.model)`` where a method of the class wrapped the field): the parameter holds the
    wrapped module, so calling it is the forward.  One step of hand-over (a
    parameter passed on again is not followed); computed once per file."""
    found = ctx.__dict__.get("_wrapped_params")
    if found is not None:
        return found
    found = {}
    signatures = {}
    for node in ctx.tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            signatures[node.name] = ([a.arg for a in positional_parameters(args)],
                                     param_names(node, starred=False))
    builders = file_builders(ctx)

    def handed(arg, held):
        if isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) and arg.func.id in builders:
            return builders[arg.func.id]  # ``decode(build(config))``
        text = dotted(arg) if not isinstance(arg, ast.Starred) else None
        return held.get(text) if text else None

    if signatures:
        for caller, class_name in _functions_with_class(ctx.tree):
            held = dict(_wrapped_locals(ctx, caller))
            owner = first_positional_param(caller) if class_name else None
            if owner is not None:
                for attr, wrapped in wrapped_fields(ctx, f"{ctx.module}:{class_name}").items():
                    held.setdefault(f"{owner}.{attr}", wrapped)
            if not held and not builders:
                continue
            for call in own_nodes(caller):
                if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name) \
                        or call.func.id not in signatures:
                    continue
                positional, names = signatures[call.func.id]
                for index, arg in enumerate(call.args[:len(positional)]):
                    wrapped = handed(arg, held)
                    if wrapped is not None:
                        found.setdefault(call.func.id, {}).setdefault(positional[index], wrapped)
                for keyword in call.keywords:
                    wrapped = handed(keyword.value, held) if keyword.arg in names else None
                    if wrapped is not None:
                        found.setdefault(call.func.id, {}).setdefault(keyword.arg, wrapped)
    ctx.__dict__["_wrapped_params"] = found
    return found


def _functions_with_class(tree: ast.Module):
    """(function, name of its class or None) of the module-level functions
    and the methods of module-level classes."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node, None
        elif isinstance(node, ast.ClassDef):
            for method in node.body:
                if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield method, node.name


def wrapped_fields(ctx, class_key: str) -> dict:
    """{field: (group, methods)} of the fields the methods of a class of this
    file assign a module wrapped for data parallelism to (``self.model =
    FullyShardedDataParallel(module)``); computed once per class."""
    memo = ctx.__dict__.setdefault("_wrapped_fields", {})
    found = memo.get(class_key)
    if found is not None:
        return found
    found = {}
    name = class_key.split(":", 1)[-1]
    for node in ctx.tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            for method in node.body:
                owner = first_positional_param(method) if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
                if owner is not None:
                    for text, wrapped in _wrapped_locals(ctx, method).items():
                        if text.startswith(owner + ".") and text.count(".") == 1:
                            found[text.split(".", 1)[1]] = wrapped
    memo[class_key] = found
    return found


def wrapped_received_fields(ctx) -> dict:
    """{field: (group, methods)} of the fields a function of this file wraps
    for data parallelism on an object it receives as a parameter
    (``def shard(model): model.visual = FullyShardedDataParallel(model.visual)``).
    The object leaves the function with the wrapped module in that field, so
    the file's functions that receive an object of unknown class and read the
    field call the wrapped module (the objects are told apart by the field's
    name only, as the file's own convention); computed once per file."""
    found = ctx.__dict__.get("_wrapped_received_fields")
    if found is not None:
        return found
    found = {}
    for node in walked(ctx.tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        params = param_names(node, starred=False)
        if not params:
            continue
        for text, wrapped in _wrapped_locals(ctx, node).items():
            head, _, attr = text.partition(".")
            if head in params and attr and "." not in attr and head not in ("self", "cls"):
                found.setdefault(attr, wrapped)
    ctx.__dict__["_wrapped_received_fields"] = found
    return found


def _wrapped_locals(ctx, func: ast.AST) -> dict:
    """{assigned text: (group, methods)} of the wrapper calls a function makes
    (``model = DDP(m)``, ``self.model = FSDP(m)``, ``fully_shard(m)``,
    ``model = build(config)`` of a builder of the file, a module built under
    a partitioning context); worked out once per function of the file (its
    own wrappings, its class's and the file's wrapped fields all ask)."""
    memo = ctx.__dict__.setdefault("_wrapped_locals", {})
    known = memo.get(id(func))
    if known is None:
        known = memo[id(func)] = _find_wrapped_locals(ctx, func, file_builders(ctx))[0]
    return known


def _find_wrapped_locals(ctx, func: ast.AST, builders: dict) -> tuple:
    """({assigned text: (group, methods)}, (group, methods) of the wrapped
    module the function returns or None)."""
    wrappers = ctx.knowledge.data_parallel_wrappers
    withs = partitioning_withs(ctx)
    targets: dict = {}  # id(value) -> assigned texts
    statements = set()  # id() of the calls that are whole expression statements
    made: dict = {}  # id(call) -> (group, methods) of the calls that make a wrapped module
    returns = []
    out: dict = {}
    nodes = list(own_nodes(func))
    for node in nodes:
        if type(node) in (ast.With, ast.AsyncWith) and id(node) in withs:
            # what a statement directly in the body builds is partitioned
            for statement in node.body:
                value = statement.value if isinstance(statement, (ast.Assign, ast.Return)) else None
                if isinstance(value, ast.Call):
                    made[id(value)] = withs[id(node)]
    for node in nodes:
        if isinstance(node, ast.Assign):
            texts = [dotted(target) for target in node.targets]
            targets[id(node.value)] = [text for text in texts if text and "()" not in text]
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            statements.add(id(node.value))
        elif isinstance(node, ast.Return) and node.value is not None:
            returns.append(node.value)
        elif isinstance(node, ast.Call) and id(node) not in made:
            raw = dotted(node.func)
            canon = canonical_text(raw, ctx.imports) if raw else None
            methods = next((tuple(m) for pattern, m in wrappers if canon and fnmatch_any(canon, [pattern])), None)
            if methods is None:
                if type(node.func) is ast.Name and raw in builders:
                    made[id(node)] = builders[raw]
                continue
            group = "world"
            for keyword in node.keywords:
                if keyword.arg == "process_group":
                    group = group_from_text(unparse(keyword.value)) or "world"
            made[id(node)] = (group, methods)
            if id(node) in statements and node.args and isinstance(node.args[0], ast.Name):
                out.setdefault(node.args[0].id, (group, methods))  # wrapped in place (``fully_shard(m)``)
    for key, wrapped in made.items():
        for text in targets.get(key, ()):
            out[text] = wrapped
    # a wrapped local handed on as it is (``model = DDP(m)`` then ``self.model
    # = model``, the wrapping often under ``if world_size > 1``): the field or
    # name holds the same module
    for node in nodes:
        if isinstance(node, ast.Assign) and type(node.value) is ast.Name and node.value.id in out:
            for text in targets.get(id(node.value), ()):
                out.setdefault(text, out[node.value.id])
    returned = None
    for value in returns:
        if id(value) in made:
            returned = made[id(value)]
        elif isinstance(value, ast.Name) and value.id in out:
            returned = out[value.id]
        if returned is not None:
            break
    return out, returned
