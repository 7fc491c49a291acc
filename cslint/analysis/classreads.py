"""The classes a function reads as a value, and a classmethod's calls of its
own class, noted by the one cheap walk of each function
(:mod:`~cslint.analysis.functionscan`) for
:mod:`~cslint.analysis.constructiongroups`: an object of a class handed
on (``return Impl`` from a dispatcher, ``{"v2": Impl}``, ``pick(Impl)``)
may be built where no call names the class, so what every construction the
pass reads hands a field is not all it may hold; ``cls(t, group=group)`` in
a classmethod builds an object of its class, a call the pass leaves
unresolved."""

from __future__ import annotations

import ast


#: no class read as a value (``FunctionInfo.handed_classes``)
NO_NAMES = frozenset()

#: calls that read a class as a type to test against, not to build or hand on
TYPE_TESTS = frozenset({"isinstance", "issubclass"})


def class_names_of(ctx) -> dict:
    """The names a module may read a class of the tree by -- its own classes
    and the names it imports capitalised, as classes are -- each to the
    class's own name (``import Impl as _Impl``: ``_Impl`` -> ``Impl``)."""
    try:
        return ctx._class_names  # (worked out once per module: every function's scan asks)
    except AttributeError:
        pass
    found = {name: name for name in ctx.module_classes}
    for local, dotted_name in ctx.imports.items():
        first = local[:1]
        if first == "_" or "A" <= first <= "Z":  # (a class, or one under a private alias)
            own = dotted_name.rpartition(".")[2]
            if "A" <= own[:1] <= "Z":
                found.setdefault(local, own)
    ctx._class_names = found
    return found


def type_tested(call: ast.Call) -> tuple:
    """The names ``isinstance(x, A)`` / ``isinstance(x, (A, B))`` tests against."""
    if len(call.args) != 2:
        return ()
    kind = call.args[1]
    return tuple(kind.elts) if type(kind) is ast.Tuple else (kind,)


def handed_classes(class_names: dict, reads: list, calls: list) -> frozenset:
    """The classes (by their own names) of the name nodes ``reads`` that are
    not among ``calls``, the callees and type tests of the walk."""
    handed = []
    for read in reads:
        for called in calls:
            if read is called:
                break
        else:
            handed.append(class_names[read.id])
    return frozenset(handed) if handed else NO_NAMES
