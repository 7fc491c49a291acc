"""The ``__init__`` a dataclass or a record class is given (:func:`dataclass_init`): a class decorated with
``dataclass`` (bare or called, not told ``init=False``) or derived from a record base (``msgspec.Struct``,
``pydantic.BaseModel``, ``typing.NamedTuple``), without an ``__init__`` of its own, takes its annotated fields in
order (those of its dataclass bases of the same file first) and assigns each from its parameter, or from its default
where it does not take it: a synthetic definition the file's walk analyses as it would a written one."""

from __future__ import annotations

import ast
from typing import Optional

from .scope import ModuleContext, canonical_text
from .syntax import dotted


#: the bases a dataclass may have besides dataclasses of its own file (their
#: fields are none of the ``__init__``'s)
_NEUTRAL_BASES = frozenset({"object", "ABC", "Generic", "Protocol"})
#: library bases whose subclasses are given an ``__init__`` made from their
#: annotated fields, as a dataclass is (``class Context(msgspec.Struct)``;
#: ``class StepState(NamedTuple)``, still a tuple of what it was built with)
_RECORD_BASES = frozenset({"msgspec.Struct", "pydantic.BaseModel", "typing.NamedTuple"})


def _record_base(base: ast.expr, imports: dict) -> bool:
    return canonical_text(dotted(base) or "", imports) in _RECORD_BASES


def _is_dataclass(stmt: ast.ClassDef, imports: dict) -> bool:
    """Decorated with ``dataclass`` (``dataclasses``', pydantic's), bare or
    called, and not told ``init=False``; or derived from a record base
    (:data:`_RECORD_BASES`)."""
    if any(_record_base(base, imports) for base in stmt.bases):
        return True
    for decorator in stmt.decorator_list:
        call = decorator if type(decorator) is ast.Call else None
        text = dotted(call.func if call is not None else decorator) or ""
        if text.rsplit(".", 1)[-1] != "dataclass":
            continue
        return call is None or not any(kw.arg == "init" and type(kw.value) is ast.Constant and kw.value.value is False
                                       for kw in call.keywords)
    return False


def _annotation_name(annotation) -> str:
    node = annotation.value if type(annotation) is ast.Subscript else annotation
    if type(node) is ast.Constant and type(node.value) is str:
        return node.value.split("[", 1)[0].rsplit(".", 1)[-1]
    return (dotted(node) or "").rsplit(".", 1)[-1]


def _dataclass_fields(stmt: ast.ClassDef, classes: dict, open_: tuple, imports: dict) -> Optional[dict]:
    """A dataclass's fields in the order its ``__init__`` takes them (those
    of dataclass bases of the same file first, a redefined one keeping its
    place): name -> (the class body's annotated assignment, whether
    ``__init__`` takes it, whether it assigns it, its default expression);
    None when a base's fields are not known here."""
    fields: dict = {}
    for base in stmt.bases:
        text = dotted(base.value if type(base) is ast.Subscript else base) or ""
        if text.rsplit(".", 1)[-1] in _NEUTRAL_BASES or _record_base(base, imports):
            continue
        node = classes.get(text)
        if node is None or node in open_ or not _is_dataclass(node, imports):
            return None
        inherited = _dataclass_fields(node, classes, open_ + (stmt,), imports)
        if inherited is None:
            return None
        fields.update(inherited)
    for inner in stmt.body:
        if type(inner) is not ast.AnnAssign or type(inner.target) is not ast.Name:
            continue
        kind = _annotation_name(inner.annotation)
        if kind == "ClassVar" or kind == "KW_ONLY":
            continue
        takes, default = True, inner.value
        call = inner.value if type(inner.value) is ast.Call else None
        if call is not None and (dotted(call.func) or "").rsplit(".", 1)[-1] == "field":
            default = None
            for kw in call.keywords:
                if kw.arg == "init" and type(kw.value) is ast.Constant and kw.value.value is False:
                    takes = False
                elif kw.arg == "default":
                    default = kw.value
                elif kw.arg == "default_factory":
                    default = ast.copy_location(ast.Call(func=kw.value, args=[], keywords=[]), kw.value)
        fields[inner.target.id] = (inner, takes, kind != "InitVar", default)
    return fields


def dataclass_init(ctx: ModuleContext, stmt: ast.ClassDef) -> Optional[ast.FunctionDef]:
    """The ``__init__`` a dataclass (or a record: :data:`_RECORD_BASES`)
    without one of its own is given: each field it takes assigned from its
    parameter of that name, a field it does not take from its default (a
    synthetic definition at the class's line; each assignment at its
    field's line).  Without it, a call of the class
    ran no function of the tree, so its result was every argument at once
    and each field read of it all of them (a path read from a file on this
    rank made the model name beside it differ).  None: not a dataclass, one
    with its own ``__init__``, or one whose dataclass bases are not all of
    this file (the fields' positions would be unknown)."""
    if not (stmt.decorator_list or stmt.bases) or not _is_dataclass(stmt, ctx.imports):
        return None
    if any(type(inner) in (ast.FunctionDef, ast.AsyncFunctionDef) and inner.name == "__init__" for inner in stmt.body):
        return None
    classes = ctx.__dict__.get("_top_classes")
    if classes is None:
        classes = ctx._top_classes = {node.name: node for node in ctx.tree.body if type(node) is ast.ClassDef}
    fields = _dataclass_fields(stmt, classes, (), ctx.imports)
    if fields is None:
        return None
    args = [ast.arg(arg="self", annotation=None)]
    defaults: list = []
    body: list = []
    for name, (inner, takes, assigns, default) in fields.items():
        if takes:
            args.append(ast.copy_location(ast.arg(arg=name, annotation=inner.annotation), inner))
            if default is not None:
                defaults.append(default)
            else:
                defaults = []  # a default counts only in the trailing run
            value = ast.Name(id=name, ctx=ast.Load())
        elif default is not None:
            value = default
        else:
            continue
        if assigns:
            target = ast.Attribute(value=ast.Name(id="self", ctx=ast.Load()), attr=name, ctx=ast.Store())
            assign = ast.Assign(targets=[target], value=value)
            for node in (assign, target, target.value, value):
                if not hasattr(node, "lineno"):
                    ast.copy_location(node, inner)
            body.append(assign)
    if not body:
        body.append(ast.copy_location(ast.Pass(), stmt))
    func = ast.FunctionDef(name="__init__", args=ast.arguments(
        posonlyargs=[], args=args, vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=defaults),
        body=body, decorator_list=[], returns=None, type_comment=None)
    ast.copy_location(func, stmt)
    ast.copy_location(func.args, stmt)
    ast.copy_location(args[0], stmt)
    return func
