"""The fields an ``__init__`` sets from one of its parameters and from
nothing else (``self.group = group``; ``FuncFacts.field_params``), read off
the constructor's own file: a field that anything the constructor runs on
``self`` may assign again (a method it calls, ``super().__init__`` of a base
the file defines, a property's setter) is left out, and every field is
where the file does not show all it runs on ``self``
(:func:`field_parameters`).  The whole-tree pass reads them only for a class no
class of the tree subclasses (``constructiongroups.held_field_params``)."""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import COMPREHENSIONS, statement_lists, walk, walked
from .bindings import TARGET_STATEMENTS, flatten_targets, statement_targets
from .callrefs import is_classmethod, is_staticmethod, receiver_param
from .function import FunctionInfo
from .namereach import bound_names
from .scope import ModuleContext
from .setfields import self_method
from .syntax import dotted


def field_parameters(info: FunctionInfo) -> tuple:
    """``((field, parameter), ...)`` of an ``__init__``: each field every
    assignment of which in it is a bare parameter, the same one, never
    rebound there (``self.group = group``; a field among the targets of an
    unpacking, a loop or a ``with`` is assigned something else), and that
    nothing the constructor runs on ``self`` may assign again
    (:func:`_fields_own_methods_assign`).  A constructor call's own
    collectives over ``self.group`` run over the group it passes for
    ``group`` (:func:`~cslint.analysis.program.bound_group`); the methods
    of its class run theirs over the group every construction of the tree
    names there (:mod:`~cslint.analysis.constructiongroups`), so a
    summarised ``__init__`` keeps them too: its statements are read, not
    every node of it (the parameters it rebinds, ``rebound_params``, come
    from the walk of :meth:`FunctionInfo.scan_calls`)."""
    if not info.self_name or not info.qualname.endswith(".__init__"):
        return ()
    params = {p.lstrip("*") for p in info.params[1:]}
    sources: dict = {}
    for statements in statement_lists(info.func.body):
        for node in statements:
            kind = type(node)
            if kind not in TARGET_STATEMENTS:
                continue
            if kind is not ast.Assign and kind is not ast.AnnAssign and kind is not ast.AugAssign:
                for target in statement_targets(node):  # (a loop's, a ``with``'s, a ``del``'s: never the parameter)
                    for part in flatten_targets(target):
                        attr = info.self_attr(part)
                        if attr is not None:
                            sources.setdefault(attr, set()).add(None)
                continue
            value = node.value
            stored = value.id if kind is not ast.AugAssign and type(value) is ast.Name and value.id in params \
                else None
            for target in node.targets if kind is ast.Assign else (node.target,):
                unpacked = type(target) is ast.Tuple or type(target) is ast.List
                for part in flatten_targets(target):
                    attr = info.self_attr(part)
                    if attr is not None:
                        sources.setdefault(attr, set()).add(None if unpacked else stored)
    rebound = info.rebound_params
    kept = [(attr, next(iter(names))) for attr, names in sources.items()
            if len(names) == 1 and None not in names and next(iter(names)) not in rebound]
    swapped = _fields_own_methods_assign(info) if kept else frozenset()
    if swapped is None:
        return ()
    return tuple(sorted((attr, param) for attr, param in kept if attr not in swapped))


#: bases a class may name whose methods set none of its fields
_FIELDLESS_BASES = frozenset({"object", "abc.ABC"})


def _fields_own_methods_assign(info: FunctionInfo) -> Optional[frozenset]:
    """The fields of ``self`` that the methods a constructor runs on
    ``self`` assign (``self._swap(spare)`` setting ``self.group = spare``):
    those it calls on ``self`` or reads off it as a value, and those they do
    in turn, of its class and of the bases this file defines.  Such a field
    holds what the method put there after the call, not the constructor's
    parameter alone.  None (every field) where the file does not show all
    it may run on ``self``: the constructor hands ``self`` on (an argument,
    ``setattr``, a method called through its class, a nested function or a
    lambda: ``FunctionInfo.hands_self``), the class is nested or has a base
    another module defines (whose methods, ``super().__init__`` too, the
    file does not show), a store runs code (``__setattr__``, a property, a
    class-body name that may be a data descriptor:
    :func:`_class_body_descriptors`), a method it runs takes its object in
    ``*args``, or what it runs hands ``self`` on itself (:func:`_self_uses`)."""
    ctx = info.ctx
    owner = info.qualname.rpartition(".")[0]
    if info.hands_self or owner not in ctx.module_classes:
        return None
    owners = [owner]
    for owner in owners:  # (and its bases this file defines, which it inherits methods from)
        if not _bases_named(ctx, owner):
            return None  # (``class Box(make_base())``, ``Base[int]``, ``*bases``: left out of ``class_bases``)
        for base in ctx.class_bases.get(f"{ctx.module}:{owner}", ()):
            if base not in ctx.module_classes:
                if base not in _FIELDLESS_BASES:
                    return None
            elif base not in owners:
                owners.append(base)
    if _family_runs_unseen(ctx, owners):
        return None
    definitions = ctx.definitions()
    methods = {name.partition(".")[2] for name in definitions if name.partition(".")[0] in owners}
    if "__setattr__" in methods or info.self_stores & methods:
        return None  # (a store that runs a method: ``__setattr__``, a property's setter)
    descriptors = _class_body_descriptors(ctx, owners)  # (``group = property(get, put)``: a setter not spelt as a def)
    if info.self_stores & descriptors:
        return None
    if "__dict__" in info.self_value_names or info.binds_computed_names:
        return None  # ``self.__dict__[k] = v``, ``self.__dict__.update(...)``
    fields, named = set(), set()
    family = tuple(owners)
    own_uses = _self_uses(ctx, info.func, info.self_name)
    if own_uses is None:  # (``getattr(self, "x")`` in it: every call named on ``self`` or ``super()`` as a ``self`` one)
        todo = [(name, family) for name in info.self_calls]
    else:
        if own_uses[3] and _super_may_reach_a_base(family, family[0]):
            return None  # (``super()`` into a base of the file: see below)
        todo = [(name, family) for name in own_uses[2]]
        todo.extend((name, ()) for name in own_uses[3])  # (past every class of the file: ``object``'s)
    todo.extend((name, family) for name in info.self_value_names | info.value_names if name in methods)  # ``f = self._swap``
    seen = set()
    while todo:
        item = todo.pop()
        if item in seen:
            continue
        seen.add(item)
        name, classes = item
        if any(name in _class_body_bindings(ctx, cls) for cls in classes):
            return None  # (``__init__ = _base_init``, ``= functools.partialmethod(...)``: no ``def`` to read)
        found = [(cls, definitions.get(f"{cls}.{name}")) for cls in classes]
        found = [(cls, method) for cls, method in found if method is not None]
        if not found:
            if classes[:1] == family[:1] or name != "__init__":
                named.add(name)
            continue  # (``super().__init__()`` past every class of the file: ``object``'s, which sets nothing)
        for cls, method in found:
            # (a staticmethod or a classmethod is handed no object: one ``self`` hands it is the constructor's)
            if is_staticmethod(method) or is_classmethod(method):
                continue
            own = receiver_param(method)  # (None: ``def _fix(*args)``, handed ``self`` as ``args[0]``)
            uses = _self_uses(ctx, method, own) if own is not None else None
            if uses is None:
                return None
            stores, reads, calls, super_calls = uses
            if stores & (methods | descriptors):
                return None  # (a property's setter)
            fields |= stores
            todo.extend((name, family) for name in reads & methods)  # (read as a value to call later)
            todo.extend((name, family) for name in calls)
            if super_calls and _super_may_reach_a_base(family, cls):
                # ``super().k()`` reaching a base the file defines: what runs is that base's ``k`` as the
                # program left it, which a call handing the class on (``install(Base)``), a rebinding
                # (``Base = dataclass(Base)``), a loop alias or another module may have replaced; only a
                # ``super()`` past every class of the file (``object``'s, which sets nothing) is read
                return None
            todo.extend((name, ()) for name in super_calls)
    # a name called on ``self`` that no method of the family here defines: a callable field
    # the constructor stored (handed in: it never saw ``self``), else one the file cannot show
    if not named <= fields | info.self_stores:
        return None
    return frozenset(fields)


#: class-body names that change what constructing an object runs, whatever the methods the file shows
_CONSTRUCTION_HOOKS = frozenset({"__new__", "__init_subclass__", "__class_getitem__"})
_PLAIN_METACLASSES = frozenset({"ABCMeta", "abc.ABCMeta"})


def _family_runs_unseen(ctx: ModuleContext, owners: list) -> bool:
    """Whether constructing an object of the family ``owners`` (classes of
    this file) may run methods the file does not show as a ``def`` of their
    bodies: a class decorator (``@dataclass`` writes an ``__init__``, any
    decorator may swap or subclass the class), a metaclass other than
    ``ABCMeta`` or another class keyword, a ``__new__`` or
    ``__init_subclass__`` in a body, or a class the module patches
    (``Base.__init__ = f``, ``setattr(Base, ...)``, ``B = Base``: an alias
    the file may patch through)."""
    patched = _patched_classes(ctx)
    for node in ctx.tree.body:
        if type(node) is not ast.ClassDef or node.name not in owners:
            continue
        if node.decorator_list or node.name in patched:
            return True
        if any(k.arg != "metaclass" or dotted(k.value) not in _PLAIN_METACLASSES for k in node.keywords):
            return True
        if _CONSTRUCTION_HOOKS & (_class_body_bindings(ctx, node.name) | _class_body_defs(node)):
            return True
    return False


def _class_body_defs(node: ast.ClassDef) -> set:
    return {stmt.name for stmt in node.body if type(stmt) in (ast.FunctionDef, ast.AsyncFunctionDef)}


def _patched_classes(ctx: ModuleContext) -> frozenset:
    """The top-level classes of the module stored into anywhere in it
    (``Cls.k = v``, ``del Cls.k``, ``setattr(Cls, ...)``/``delattr``) or
    bound to another name whole (``B = Cls``)."""
    memo = ctx.__dict__
    found = memo.get("_patched_classes")
    if found is None:
        classes = {node.name for node in ctx.tree.body if type(node) is ast.ClassDef}
        patched = set()
        # (every node as one list: no generator resumed per node of the whole module)
        for node in walked(ctx.tree) if classes else ():
            kind = type(node)
            if kind is ast.Attribute and type(node.ctx) is not ast.Load:
                if type(node.value) is ast.Name and node.value.id in classes:
                    patched.add(node.value.id)
            elif kind is ast.Call:
                if type(node.func) is ast.Name and node.func.id in ("setattr", "delattr") and node.args \
                        and type(node.args[0]) is ast.Name and node.args[0].id in classes:
                    patched.add(node.args[0].id)
            elif kind is ast.Assign or kind is ast.AnnAssign or kind is ast.NamedExpr:
                value = node.value
                if type(value) is ast.Name and value.id in classes:
                    patched.add(value.id)
        found = memo["_patched_classes"] = frozenset(patched)
    return found


def _class_body_bindings(ctx: ModuleContext, cls: str) -> frozenset:
    """The names the body of the top-level class ``cls`` binds other than
    by a ``def`` (an inert value too: ``__init__ = lambda self: ...``)."""
    return _class_body_names(ctx, cls)[0]


def _class_body_names(ctx: ModuleContext, cls: str) -> tuple:
    """``(bindings, descriptors)`` of the bodies of the top-level classes
    named ``cls``, read in one walk of their statements and kept per name:
    :func:`_class_body_bindings` and what :func:`_class_body_descriptors`
    reads."""
    memo = ctx.__dict__.setdefault("_class_body_names", {})
    names = memo.get(cls)
    if names is None:
        bindings, descriptors = set(), set()
        for node in ctx.tree.body:
            if type(node) is ast.ClassDef and node.name == cls:
                _read_class_body(node.body, bindings, descriptors)
        names = memo[cls] = (frozenset(bindings), frozenset(descriptors))
    return names


def _bases_named(ctx: ModuleContext, name: str) -> bool:
    """Whether every base the top-level class ``name`` lists is a dotted
    name (``ModuleContext.class_bases`` holds those alone)."""
    return all(all(map(dotted, node.bases)) for node in ctx.tree.body
               if type(node) is ast.ClassDef and node.name == name)


def _super_may_reach_a_base(family: tuple, cls: str) -> bool:
    """Whether ``super()`` in a method of ``cls`` may reach a class of
    ``family`` (the constructed class first, then the bases this file
    defines): any but the constructed class and ``cls`` itself."""
    return any(other != cls for other in family[1:])


#: class-body values that are no data descriptor: an instance store of the name they bind runs no code of theirs
#: (a function is a descriptor without ``__set__``; a number, string or display has no ``__get__`` at all)
_INERT_CLASS_VALUES = frozenset({ast.Constant, ast.JoinedStr, ast.Lambda, ast.List, ast.Tuple, ast.Set, ast.Dict}) \
    | COMPREHENSIONS


def _class_body_descriptors(ctx: ModuleContext, owners: list) -> frozenset:
    """The names the bodies of the classes ``owners`` (of this file) bind
    other than to a ``def`` or an inert value (:data:`_INERT_CLASS_VALUES`):
    each may be a data descriptor (``group = property(get, put)``, an object
    whose class defines ``__set__``), so that ``self.group = x`` runs code
    the file does not show as a method.  Any binding inside another
    statement of the body (an ``if``, a ``try``) counts."""
    found = set()
    for owner in owners:
        found |= _class_body_names(ctx, owner)[1]
    return frozenset(found)


def _read_class_body(body: list, bindings: set, descriptors: set) -> None:
    """Adds to ``bindings`` the names the class body ``body`` binds other
    than by a ``def``, and to ``descriptors`` those of them it binds other
    than to an inert value (:func:`_class_body_descriptors`)."""
    for stmt in body:
        kind = type(stmt)
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef or kind is ast.Pass:
            continue
        bound = bound_names(stmt)
        bindings |= bound
        if kind is ast.Assign or kind is ast.AnnAssign or kind is ast.AugAssign:
            value = stmt.value
            if value is None:
                continue
            if type(value) in _INERT_CLASS_VALUES and kind is not ast.AugAssign:
                descriptors.update(node.target.id for node in walk(value) if type(node) is ast.NamedExpr)
                continue
        descriptors |= bound


def _self_uses(ctx: ModuleContext, method, own: str) -> Optional[tuple]:
    """``(stores, reads, calls)``: the attributes ``method`` assigns on
    ``own`` (its ``self``), those it reads off it, the methods it calls on it
    (``super()`` ones too), nested functions and lambdas included; None
    where it may change its fields otherwise: it hands ``own`` on (a name
    read other than as an attribute's object) or writes ``own.__dict__``.
    Worked out once per method of the file (the constructors of a file call
    the same helpers)."""
    memo = ctx.__dict__.setdefault("_self_uses", {})
    key = id(method)
    if key in memo:
        return memo[key]
    stores, reads, calls, super_calls = set(), set(), [], []
    handed = 0  # the reads of ``own`` that are no attribute's object
    found = None
    for node in walk(method):  # (nested functions and lambdas too: they may hand ``own`` on or store on it)
        t = type(node)
        if t is ast.Name and node.id == own:
            handed += 1
        elif t is ast.Attribute and type(node.value) is ast.Name and node.value.id == own:
            handed -= 1
            if type(node.ctx) is not ast.Load:
                stores.add(node.attr)
            elif node.attr == "__dict__":
                break
            else:
                reads.add(node.attr)
        elif t is ast.Call:
            func = node.func
            if type(func) is ast.Attribute and type(func.value) is ast.Call and type(func.value.func) is ast.Name \
                    and func.value.func.id == "super" and not func.value.args:
                super_calls.append(func.attr)  # (``super(Cls, self).k()`` names where it starts: as ``self.k()``)
            elif self_method(func, own) is not None:
                calls.append(func.attr)
    else:
        if handed <= 0:
            found = (frozenset(stores), frozenset(reads), tuple(calls), tuple(super_calls))
    memo[key] = found
    return found
