"""The methods whose exceptions end the whole job (issue 14).

Under ``unhandled-exceptions = "hang"`` an exception that leaves one rank
leaves its peers blocked in their next collective.  Not where the only way
into the method is a ``try`` that kills the job when an exception leaves
its body: a worker's loop wrapper

    crashed = False
    try:
        self.loop()
    except Exception:
        crashed = True
        raise
    finally:
        if crashed:
            kill_job()

(``kill_job`` a call a preset names in ``job_ending_calls``: one that tears
every rank down) turns a raise out of the loop on one rank into the end of
the job, not a hang.  Such a ``try`` has a handler catching ``Exception``
(or everything) that calls one itself, or sets a name a test around such a
call in its ``finally`` reads (or the ``finally`` calls one untested).

The methods it runs (:func:`killed_functions`): a method of the class the
``try`` body calls on ``self`` -- by its own name, or through a field the
class binds only to its methods (``self.loop = self._loop_a if c else
self._loop_b``) --, every call naming it in the file made inside such a
``try`` and every read of it as a value a binding of such a field (or a
read of one of its attributes, ``self._loop_a.__name__``); then, closed
over calls, a private method (``_name``: not part of what other modules
call) every call naming which in the file is made by one of them.  In
those the analysis reads an exception that leaves the method as a crash
(``unhandled-exceptions = "crash"``): no edge out for an uncaught
``assert``, no condition from a callee that may fail.  Told per file, as the
callee escapes are (escapes.py)."""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import walked
from .callrefs import receiver_param
from .exits import catches_everything



def exceptions_hang(info) -> bool:
    """Whether an exception leaving ``info``'s function on one rank hangs
    its peers: the file's setting, less the methods only a job-killing
    ``try`` runs."""
    ctx = info.ctx
    return ctx.exceptions_hang and id(info.func) not in killed_functions(ctx)


def killed_functions(ctx) -> frozenset:
    """``id`` of each method of the file an exception leaving which ends the
    job (the module docstring); computed once per file."""
    found = ctx.__dict__.get("_killed_functions")
    if found is None:
        ends = ctx.knowledge.job_ending_calls
        found = _killed(ctx.tree, ends) if ends and ctx.exceptions_hang else frozenset()
        ctx.__dict__["_killed_functions"] = found
    return found


def _calls_ending(stmts, ends) -> bool:
    return any(type(node) is ast.Call and _named(node.func) in ends for stmt in stmts for node in walked(stmt))


def _assigned_names(stmts) -> frozenset:
    return frozenset(target.id for stmt in stmts for node in walked(stmt) if type(node) is ast.Assign
                     for target in node.targets if type(target) is ast.Name)


def _finally_kills(finalbody, flags: frozenset, ends) -> bool:
    """Whether the ``finally`` calls a job-ending call untested, or under a
    test reading one of ``flags``."""
    for stmt in finalbody:
        if type(stmt) is ast.If:
            read = {n.id for n in walked(stmt.test) if type(n) is ast.Name}
            if read & flags and _calls_ending(stmt.body, ends):
                return True
        elif type(stmt) is ast.Try:
            if _finally_kills(stmt.body, flags, ends) or _finally_kills(stmt.finalbody, flags, ends):
                return True
        elif type(stmt) is ast.Expr and _calls_ending([stmt], ends):
            return True
    return False


def kills_job(node: ast.Try, ends) -> bool:
    """Whether an exception leaving ``node``'s body ends the job."""
    for handler in node.handlers:
        if not catches_everything(handler):
            continue
        if _calls_ending(handler.body, ends):
            return True
        if node.finalbody and _finally_kills(node.finalbody, _assigned_names(handler.body), ends):
            return True
    return False


def _killed(tree: ast.Module, ends) -> frozenset:
    out = set()
    classes = [cls for cls in walked(tree) if type(cls) is ast.ClassDef]
    for cls in classes:
        if any(type(node) is ast.Try and kills_job(node, ends) for node in walked(cls)):
            own = {id(n) for m in cls.body for n in walked(m)}
            elsewhere = frozenset(_named(n) for n in walked(tree) if id(n) not in own) - {None}
            out |= _killed_in_class(cls, ends, elsewhere)
    return frozenset(out)


def _named(node):
    """The name an attribute or a plain name reads (called or not)."""
    kind = type(node)
    return node.attr if kind is ast.Attribute else node.id if kind is ast.Name else None


def _self_attr(node, self_name: Optional[str]) -> Optional[str]:
    """``attr`` of ``self.attr`` (``self_name``: the method's name for its object)."""
    return node.attr if type(node) is ast.Attribute and type(node.value) is ast.Name \
        and node.value.id == self_name else None


def _killed_in_class(cls: ast.ClassDef, ends, elsewhere: frozenset) -> set:
    """``elsewhere``: the names read (called or not) outside the class's methods."""
    methods = {m.name: m for m in cls.body if type(m) in (ast.FunctionDef, ast.AsyncFunctionDef)}
    inside = set()  # id of each call made inside a job-killing try's body
    for node in walked(cls):
        if type(node) is ast.Try and kills_job(node, ends):
            inside.update(id(n) for stmt in node.body for n in walked(stmt) if type(n) is ast.Call)
    if not inside:
        return set()
    calls: dict = {}  # name -> [(caller method, whether inside)]
    value_reads: dict = {}  # name -> the number of its reads as a value that bind no field, nor read its attributes
    bound: dict = {}  # field -> the methods bound to it
    for name, method in methods.items():
        # a classmethod's ``cls`` too: what it reads of the class (``cls._loop``) is the methods ``self`` reads
        self_name = receiver_param(method)
        parents = {}
        for node in walked(method):
            for child in ast.iter_child_nodes(node):
                parents[id(child)] = node
        for node in walked(method):
            if type(node) is ast.Call:
                called = _named(node.func)  # ``self.m()`` and any ``x.m()`` alike: by the method's name
                if called is not None:
                    calls.setdefault(called, []).append((name, id(node) in inside))
            elif type(node) is ast.Assign and len(node.targets) == 1 and _self_attr(node.targets[0], self_name):
                field = node.targets[0].attr
                for read in walked(node.value):
                    attr = _self_attr(read, self_name)
                    if attr in methods:
                        bound.setdefault(field, set()).add(attr)
            attr = _self_attr(node, self_name)
            if attr is not None and type(node.ctx) is ast.Load:
                parent = parents.get(id(node))
                if type(parent) is ast.Call and parent.func is node:
                    continue
                if type(parent) is ast.Attribute:
                    continue  # self.method.__name__
                if _binds_field(node, parents, self_name):
                    continue
                value_reads[attr] = value_reads.get(attr, 0) + 1
    killed = set()
    for name in methods:
        if value_reads.get(name) or name.startswith("__") or name in elsewhere:
            continue
        fields = [field for field, names in bound.items() if name in names]
        if any(value_reads.get(field) or field in elsewhere for field in fields):
            continue  # a field read as a value may run it anywhere
        made = [c for n in [name] + fields for c in calls.get(n, ())]
        if made and all(inside_ for _, inside_ in made):
            killed.add(name)
    changed = True
    while changed:
        changed = False
        for name in methods:
            if name in killed or not name.startswith("_") or name.startswith("__") or value_reads.get(name) \
                    or name in elsewhere:
                continue
            made = calls.get(name, ())
            if made and all(caller in killed for caller, _ in made):
                killed.add(name)
                changed = True
    return {id(methods[name]) for name in killed}


def _binds_field(node, parents, self_name: Optional[str]) -> bool:
    """Whether a read sits in the value bound to a ``self`` field."""
    parent = parents.get(id(node))
    while parent is not None:
        if type(parent) is ast.Assign:
            return len(parent.targets) == 1 and _self_attr(parent.targets[0], self_name) is not None
        if isinstance(parent, ast.stmt):
            return False
        parent = parents.get(id(parent))
    return False
