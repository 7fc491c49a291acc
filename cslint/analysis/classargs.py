"""Classes handed to a function that calls them: ``def collect(self, reqs,
entry_cls): entry = entry_cls(rid=req.rid, host=self.host)``.

Called, such a parameter builds an object of whatever class the caller
chose.  Where every call of the function in the tree passes a class of the
tree there (``self.collect(reqs, PushEntry)``, ``self.collect(reqs,
entry_cls=RemoteEntry)``), the call is one of those classes' constructors
(:class:`~cslint.analysis.callrefs.ParamCallRef`): a new object of one of
them, each argument reaching the field it is stored in, as a call naming
the class does; not an object made of all its arguments at once.

Two halves: the file's side (:func:`parameter_call_ref`, a call of a
parameter the function never rebinds; :func:`class_arguments`, the calls that
pass a class by name, as ``FuncFacts.class_args``) and the whole-tree side
(:class:`ParamClasses`, which reads every call of the function).

A local the function binds to a class it chooses (``W = CpuWorker if
use_cpu() else Worker``; ``w = W(local_rank=r)``) builds likewise an object
of one of the classes its bindings name (:func:`chosen_class_call_ref`,
:class:`~cslint.analysis.callrefs.ChosenClassRef`), where each is a class of
the tree (``Resolver.built_classes``); else the call stays unresolved.
"""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import CHILDREN, DEFINITIONS, defaulted_parameters, walked
from .bindings import local_values
from .callrefs import (ChosenClassRef, ParamCallRef, chosen_class_ref, class_ref, param_call_ref, qual_ref,
                       receiver_shift, ref_offset)


# -- the file's side -----------------------------------------------------------


def parameter_call_ref(info, name: str) -> Optional[ParamCallRef]:
    """The reference of a call of the parameter ``name`` of the function of
    ``info``, where such a call can be bound at the function's callers: a
    plain parameter (not ``*args``/``**kwargs``, not ``self``) with no
    default, so every call passes it, that the body never rebinds; a
    constructor's own parameters are left out (what a class builds from a
    class handed to it is read through its fields)."""
    if name not in info.params:
        return None
    known = info.__dict__.get("_called_params")
    if known is None:
        known = info._called_params = _bindable_params(info)
    index = known.get(name)
    return None if index is None else param_call_ref(info.key, index)


#: the values a binding that names a class, or picks one, has
_CLASS_CHOICES = frozenset({ast.Name, ast.Attribute, ast.IfExp})


def chosen_class_call_ref(info, name: str) -> Optional[ChosenClassRef]:
    """The reference of a call of the local ``name`` of the function of
    ``info`` where every binding of it (:func:`~cslint.analysis.bindings.local_values`)
    names a class, or picks one of several by a condition (``A if c else B``):
    those classes, in the order written; None for any other local."""
    # (most called locals hold a call's result: the scan's binding nodes tell so without a walk of the body)
    if not any(type(node) is ast.Assign and type(node.value) in _CLASS_CHOICES
               and any(type(target) is ast.Name and target.id == name for target in node.targets)
               for node in info.binding_nodes):
        return None
    values = local_values(info.func, name)
    if not values:
        return None
    refs: list = []
    stack = values[::-1]
    local = info.local_names
    while stack:
        expr = stack.pop()
        if type(expr) is ast.IfExp:
            stack += (expr.orelse, expr.body)
            continue
        ref = _named_class(info.ctx, expr, local)
        if ref is None:
            return None
        if ref not in refs:
            refs.append(ref)
    return chosen_class_ref(tuple(refs))


def _bindable_params(info) -> dict:
    func = info.func
    args = getattr(func, "args", None)
    if args is None or info.qualname.endswith("__init__"):
        return {}
    defaulted = {a.arg for a, _ in defaulted_parameters(args)}
    out = {}
    for index, name in enumerate(info.params):
        # (the receiver, ``self`` or a classmethod's ``cls``: callrefs.receiver_param of a method, else None)
        if name[:1] == "*" or name in defaulted or name == info.self_name:
            continue
        out[name] = index
    if out:
        for name in _rebound(func):
            out.pop(name, None)
    return out


def _rebound(func) -> set:
    """The names the function's own body stores into (nested definitions
    apart), and those it declares ``global``/``nonlocal``."""
    out = set()
    body = func.body
    stack = list(body) if type(body) is list else [body]
    table, definitions = CHILDREN, DEFINITIONS
    while stack:  # (own_nodes' walk written out: no generator resumed per node)
        node = stack.pop()
        kind = type(node)
        if kind in definitions:
            continue
        read = table[kind]
        if read is not None:
            stack += read(node)
        if kind is ast.Name and type(node.ctx) is not ast.Load:
            out.add(node.id)
        elif kind is ast.Global or kind is ast.Nonlocal:
            out.update(node.names)
    return out


def _named_class(ctx, expr, local: set):
    """The reference an argument that names a class of this module or an
    imported name is (whether it is a class of the tree, the whole-tree
    pass decides); None for anything else."""
    kind = type(expr)
    if kind is ast.Name:
        name = expr.id
        if name in local:
            return None
        if name in ctx.module_classes:
            return class_ref(f"{ctx.module}:{name}")
        if name in ctx.imports:
            return qual_ref(ctx.imports[name])
        return None
    if kind is ast.Attribute:
        parts = []
        while type(expr) is ast.Attribute:
            parts.append(expr.attr)
            expr = expr.value
        if type(expr) is ast.Name and expr.id in ctx.imports and expr.id not in local:
            return qual_ref(".".join([ctx.imports[expr.id]] + parts[::-1]))
    return None


def class_arguments(info) -> tuple:
    """``((ref, calls), ...)``: for each callee some call of the function
    passes a class by name, every call of it with arguments the function
    makes (lambdas included), each as ``((position or keyword, the class's
    reference or None), ...)``, ``"*"``/``"**"`` for an unpacked argument."""
    calls = [node for nodes in info.calls_by_statement.values() for node in nodes]
    for lambdas in info.lambdas_by_statement.values():
        for lam in lambdas:
            calls.extend(node for node in walked(lam.body) if type(node) is ast.Call and (node.args or node.keywords))
    ctx = info.ctx
    if not _passes_a_class(ctx, calls):
        return ()
    local = info.local_names  # (a name bound in the function is no class of the module)
    calls.sort(key=lambda node: (node.lineno, node.col_offset))
    by_ref: dict = {}
    for call in calls:
        ref = info.resolve_ref(call.func)
        if ref is None:
            continue
        entry = []
        for position, arg in enumerate(call.args):
            entry.append(("*", None) if type(arg) is ast.Starred else (position, _named_class(ctx, arg, local)))
        entry.extend((kw.arg, _named_class(ctx, kw.value, local)) if kw.arg else ("**", None) for kw in call.keywords)
        by_ref.setdefault(ref, []).append(tuple(entry))
    return tuple((ref, tuple(entries)) for ref, entries in by_ref.items()
                 if any(found is not None for entry in entries for _key, found in entry))


def _passes_a_class(ctx, calls: list) -> bool:
    for call in calls:
        for arg in call.args:
            if _may_name_class(ctx, arg):
                return True
        for kw in call.keywords:
            if _may_name_class(ctx, kw.value):
                return True
    return False


def _may_name_class(ctx, expr) -> bool:
    """A first look, for speed: a name of the module's classes, or an
    imported name spelt as Python names classes (``CamelCase``); a class
    it misses leaves its callee's calls unnoted, so no parameter is bound
    to a class through them."""
    last = expr.attr if type(expr) is ast.Attribute else expr.id if type(expr) is ast.Name else ""
    if not ("A" <= last[:1] <= "Z") or last.isupper():
        return False
    while type(expr) is ast.Attribute:
        expr = expr.value
    return type(expr) is ast.Name and (expr.id in ctx.module_classes or expr.id in ctx.imports)


# -- the whole-tree side -------------------------------------------------------


class ParamClasses:
    """Which classes a :class:`~cslint.analysis.callrefs.ParamCallRef` builds:
    those every call of its function in the tree passes for the parameter,
    or none at all where some call passes something else (or passes it
    unpacked, or the tree holds no call of it)."""

    def __init__(self, resolver):
        self.resolver = resolver
        self._passed = None  # function key -> [(caller, ref, calls)] of the calls passing some class
        self._memo: dict = {}

    def classes(self, ref) -> tuple:
        """The class keys the call ``ref`` builds an object of, in key order."""
        key = (ref.key, ref.index)
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = self._classes(ref)
        return found

    def _classes(self, ref) -> tuple:
        resolver = self.resolver
        target = resolver.funcs.get(ref.key)
        if target is None:
            return ()
        if self._passed is None:
            self._passed = self._passed_classes()
        if ref.key not in self._passed:
            return ()
        passed = {(id(caller), call_ref): calls for caller, call_ref, calls in self._passed[ref.key]}
        out = set()
        for caller, call_ref in resolver.callers().get(ref.key, ()):
            calls = passed.get((id(caller), call_ref))
            if calls is None:
                return ()  # a call of the function passing no class at all
            offset = ref_offset(call_ref, target)
            for entry in calls:
                named = _bound(entry, target, ref.index, offset)
                cls = resolver.class_of_ref(named) if named is not None else None
                if cls is None:
                    return ()
                out.add(cls.key)
        return tuple(sorted(out))

    def _passed_classes(self) -> dict:
        """function key -> ``[(caller, ref, calls)]`` of the calls noted in
        ``FuncFacts.class_args``, by what each reference may run."""
        out: dict = {}
        resolve = self.resolver.resolve
        for fn in self.resolver.funcs.values():
            for call_ref, calls in fn.class_args:
                for target in resolve(call_ref):
                    out.setdefault(target.key, []).append((fn, call_ref, calls))
        return out


def _bound(entry: tuple, target, index: int, offset: bool):
    """The class reference one call (``entry``) passes for parameter
    ``index`` of ``target``, or None where it passes anything else or may
    pass it unpacked."""
    name = target.params[index]
    for key, found in entry:
        if key == name:
            return found
    position = index - receiver_shift(target, offset)
    for key, found in entry:
        if key == "*" or key == "**":
            return None
        if key == position:
            return found
    return None
