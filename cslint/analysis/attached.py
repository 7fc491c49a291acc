"""Functions attached to an object at run time (issue 14, recall): ``obj.attr = helper``, where ``helper`` is a
function the enclosing function defines (a closure over its variables, ``self`` included) or a method bound to
``self`` (``obj.attr = self.method``), makes ``attr`` a callable of ``obj`` that no class defines.  A later
``other.attr(...)`` whose receiver the analysis cannot type may be any object so equipped (the objects travel in
lists and fields nothing types: a parameter list gathered in a context manager's ``__enter__``), so it may run
any function attached under that name anywhere in the tree, beside the one method a name alone finds
(:meth:`~cslint.analysis.receiverclasses.ReceiverClasses.method_by_name`).

Kept bounded: only an assignment statement of the function's own body whose target is an attribute of a plain
local or parameter (never ``self``, whose fields the class facts hold, nor a module, class or import, whose
attributes are patched for every user), and whose value is one of the two shapes above; never a name the
builtin containers and scalars define as a method (``s.partition(":")`` on an untyped string is far more
common than a call of an attached ``partition``), a generic method name or a dunder."""

from __future__ import annotations

import ast

from .astwalk import statement_lists
from .callrefs import func_ref, method_ref
from .vocabulary import GENERIC_METHODS

#: method names of the builtin containers and scalars: a receiver the analysis cannot type is one of those far
#: more often than an object a function was attached to
_BUILTIN_METHODS = frozenset(name for kind in (str, bytes, list, tuple, dict, set, frozenset, int, float)
                             for name in dir(kind))


def attachable(attr: str) -> bool:
    """Whether a call of ``attr`` on an untyped receiver may run a function attached under that name."""
    return not attr.startswith("__") and attr not in GENERIC_METHODS and attr not in _BUILTIN_METHODS


def attached_functions(info) -> tuple:
    """``((attr, ref), ...)``: the functions the function attaches to objects it holds (``FuncFacts.attached``),
    in source order, each pair once; ``ref`` a :func:`func_ref` of a nested definition or a :func:`method_ref`
    of the method bound to ``self``."""
    self_name = info.self_name if info.class_key else None
    local_defs = info.local_defs
    if not local_defs and not self_name:
        return ()
    candidates = getattr(info, "attach_candidates", None)  # noted by the call scan, which walks every node
    if candidates is None:
        candidates = [stmt for stmts in statement_lists(info.func.body) for stmt in stmts if type(stmt) is ast.Assign]
    if not candidates:
        return ()
    ctx = info.ctx
    shared = ctx.imports.keys() | ctx.module_functions | ctx.module_classes
    found: dict = {}
    for stmt in sorted(candidates, key=lambda node: (node.lineno, node.col_offset)):  # (the scan's order is a stack's)
        for target in stmt.targets:
            if type(target) is ast.Attribute and type(target.value) is ast.Name \
                    and target.value.id != self_name and target.value.id not in shared and attachable(target.attr):
                ref = _attached_ref(info, stmt.value, self_name)
                if ref is not None:
                    found[(target.attr, ref)] = None
    return tuple(found)


def _attached_ref(info, value: ast.AST, self_name):
    if type(value) is ast.Name:
        qualname = info.local_defs.get(value.id)
        return func_ref(info.ctx.module, qualname) if qualname else None
    if self_name and type(value) is ast.Attribute and type(value.value) is ast.Name and value.value.id == self_name:
        return method_ref(info.class_key, value.attr)
    return None


#: the references of a call on a receiver the file may not type, which may run an attached function
_UNTYPED_CALLS = frozenset({"name", "typed", "fieldmethod"})


def attached_reaching(functions) -> frozenset:
    """The names under which a file's functions attach one of its functions that is analysed in depth (it
    reaches a collective through the file's own functions or a known wrapper): a call of such a name on a
    receiver the file does not type may issue that collective (``engine/gather.py`` spreads its caller as a
    function issuing one, so a context manager whose ``__enter__`` gathers through an attached method reaches
    the files that enter it).  A bound method counts where the file's method of that name in the class or a
    class of the file is deep (the object may be of a subclass overriding it)."""
    deep_keys = {fn.key for fn in functions if fn.deep}
    if not deep_keys:
        return frozenset()
    deep_methods = {fn.qualname.rsplit(".", 1)[-1] for fn in functions if fn.deep and fn.class_key}
    out = set()
    for fn in functions:
        for attr, ref in fn.attached:
            if ref.tag == "func":
                if f"{ref.module}:{ref.qualname}" in deep_keys:
                    out.add(attr)
            elif ref.name in deep_methods:
                out.add(attr)
    return frozenset(out)


def calls_attached(site, names: frozenset) -> bool:
    """Whether a call site of an untyped receiver names one of ``names`` (:func:`attached_reaching`)."""
    ref = site.ref
    return ref is not None and ref.tag in _UNTYPED_CALLS and ref.name in names
