"""Files of the package itself: a path a module builds from its own
``__file__``; and the kernel's own view of the process (a constant path
under ``/proc``).

A question to the file system (``os.path.exists(path)``, ``os.listdir(path)``:
the presets' "local filesystem view") may be answered differently on each
node: a prompt file one node's disk holds, a checkpoint written where only
one rank can see it.  A path under the directory of the module asking is a
file of the installed package (a tuning table shipped beside the code,
``os.path.join(os.path.dirname(__file__), "configs", name)``): every rank
runs the same package, so whether it is there is the same on every rank, and
what the answer depends on is the path's own parts (a file name made from
the world size or the device's name still carries those).

:func:`in_package` reads that from the syntax: ``__file__`` itself, a join,
``dirname``, ``abspath`` or ``pathlib.Path`` of one (``Path(__file__).parent
/ "x"``), an f-string or a concatenation that starts with one, or a name every
binding of which in the function, else at the module's top level, is one.

:func:`in_kernel_view` reads an existence test (``exists``, ``isfile``,
``isdir``) of a constant path under ``/proc`` (``os.path.isdir("/proc/self/fd")``):
no disk holds it, the kernel answers it, and every node of a job runs the
same operating system, so whether it is there is alike on every rank.  Only
whether it is there: what it lists or holds (``os.listdir("/proc/self/fd")``,
the files this process has open) is this process's own.  Only a constant,
and none of one process's own entries: ``f"/proc/{pid}"`` and ``/proc/1234``
ask whether some process is alive, ``/proc/self/fd/7`` whether this process
has that file open.
"""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import imported_names
from .bindings import local_values, target_names
from .syntax import dotted
from .vocabulary import EXISTENCE_TESTS

#: calls whose result is a path under their first argument's directory, or that directory
_PATH_CALLS = frozenset({
    "os.path.join", "os.path.dirname", "os.path.abspath", "os.path.realpath", "os.path.normpath",
    "pathlib.Path", "pathlib.PurePath", "pathlib.Path.joinpath",
})
#: methods and attributes of a path that stay under it (or go to its directory)
_PATH_METHODS = frozenset({"joinpath", "resolve", "absolute", "with_name", "with_suffix", "parent"})
#: how many names a path is followed through
_MAX_DEPTH = 4


def in_package(expr, canonical, func, module: ast.Module, depth: int = 0) -> bool:
    """Whether ``expr`` (an argument in ``func`` of ``module``) is a path
    under the directory of the module's own file (see the module docstring);
    ``canonical(text)``: a callee's text as the module's imports spell it out."""
    if depth > _MAX_DEPTH:
        return False
    t = type(expr)
    if t is ast.Name:
        if expr.id == "__file__":
            return True
        values = local_values(func, expr.id) if func is not None and func is not module else None
        if not values:
            values = _module_bindings(module, expr.id)
        return bool(values) and all(in_package(v, canonical, func, module, depth + 1) for v in values)
    if t is ast.Call:
        name = dotted(expr.func)
        text = canonical(name) if name else None
        if text in _PATH_CALLS or (text and text.rsplit(".", 1)[-1] == "Path" and "pathlib" in text):
            return bool(expr.args) and in_package(expr.args[0], canonical, func, module, depth)
        if type(expr.func) is ast.Attribute and expr.func.attr in _PATH_METHODS:
            return in_package(expr.func.value, canonical, func, module, depth)
        return False
    if t is ast.Attribute:
        return expr.attr == "parent" and in_package(expr.value, canonical, func, module, depth)
    if t is ast.BinOp and type(expr.op) in (ast.Div, ast.Add):
        return in_package(expr.left, canonical, func, module, depth)
    if t is ast.JoinedStr and expr.values and type(expr.values[0]) is ast.FormattedValue:
        return in_package(expr.values[0].value, canonical, func, module, depth)
    return False


#: where the kernel shows the process and the machine it runs on
_KERNEL_VIEW = "/proc/"
#: under it, the files this process has open (which differ from process to process)
_OPEN_FILES = "/proc/self/fd/"


def in_kernel_view(canonical_callee: str, expr) -> bool:
    """Whether a call of ``canonical_callee`` (a canonical name) on ``expr``
    tests whether a constant path under ``/proc`` is there, a path that names
    none of one process's own entries (see the module docstring)."""
    if canonical_callee not in EXISTENCE_TESTS or type(expr) is not ast.Constant or type(expr.value) is not str:
        return False
    path = expr.value
    return path.startswith(_KERNEL_VIEW) and not path.startswith(_OPEN_FILES) \
        and not path[len(_KERNEL_VIEW):].partition("/")[0].isdigit()


def _module_bindings(module, name: str) -> Optional[list]:
    """The values every top-level binding of ``name`` in ``module`` assigns,
    or None where one is not a plain assignment of one name (a loop,
    ``global``, an augmented assignment, a ``with`` or an import)."""
    values = []
    for node in module.body:
        t = type(node)
        if t is ast.Assign:
            for target in node.targets:
                if type(target) is ast.Name and target.id == name:
                    values.append(node.value)
                elif name in target_names(target):
                    return None
        elif t is ast.AnnAssign and type(node.target) is ast.Name and node.target.id == name:
            if node.value is None:
                continue
            values.append(node.value)
        elif t in (ast.AugAssign, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.Import, ast.ImportFrom,
                   ast.Global, ast.Nonlocal, ast.NamedExpr):
            if _binds(node, name):
                return None
    return values


def _binds(node, name: str) -> bool:
    t = type(node)
    if t is ast.Global or t is ast.Nonlocal:
        return name in node.names
    if t is ast.Import or t is ast.ImportFrom:
        return name in imported_names(node)
    if t is ast.AugAssign or t is ast.For or t is ast.AsyncFor:
        return name in target_names(node.target)
    if t is ast.NamedExpr:
        return node.target.id == name
    return any(item.optional_vars is not None and name in target_names(item.optional_vars) for item in node.items)
