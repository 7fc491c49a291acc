"""Configuration files: a file a function is handed by a path it was given
whole, tests for and then only reads.

A question to the file system (``os.path.exists(path)``: the presets'
"local filesystem view") may be answered differently on each node: a file on
one node's disk, a checkpoint's ``latest`` file that rank 0 writes while the
others look for it.  A function that is handed a path whole (a parameter, a
setting read from an object or a mapping: ``config``, ``args.config_file``,
``cfg["path"]``), tests whether it is a file and opens it for reading only,
and nothing else, reads a file the job was given as its input (a
configuration file, ``if os.path.exists(config): return json.load(open(config))``):
every rank is handed the same name, and the file is there before the job
starts, so the answer is what the name is.  The test's result is then what
its argument holds (:func:`~cslint.analysis.callplans.plan_call`): a path a
caller builds from this rank's id, host name or process id still differs.

What is no configuration file: a file at a name the function puts under a
directory (``os.path.join(save_dir, "latest")``, an f-string): the job's own
output, which some rank writes while others look; a path the function also
opens for writing or appending; a constant path (a file a node's own disk
holds); a directory's listing, a size, a time (only the existence tests
``exists`` and ``isfile`` are read here).
"""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import own_nodes
from .syntax import dotted, local_values, plain_dotted

#: the tests of whether a path names a file (what a configuration loader asks first)
_EXISTENCE_TESTS = frozenset({"os.path.exists", "os.path.isfile"})
#: the calls opening a file: ``open(path, mode)``
_OPENERS = frozenset({"open", "io.open"})
#: the characters of a mode that writes
_WRITING = frozenset("wax+")
#: how many local names a path is followed through
_MAX_DEPTH = 4


def read_configuration(call: ast.Call, canonical, func) -> bool:
    """Whether ``call`` (in ``func``) tests for a file the function was
    handed whole and only reads (see the module docstring); ``canonical(text)``:
    a callee's text as the module's imports spell it out."""
    name = dotted(call.func)
    if not call.args or name is None or canonical(name) not in _EXISTENCE_TESTS or func is None:
        return False
    path = call.args[0]
    if not _handed_whole(path, func, 0):
        return False
    wanted = ast.dump(path)
    modes = [_open_mode(node) for node in own_nodes(func)
             if type(node) is ast.Call and node.args and ast.dump(node.args[0]) == wanted
             and (opener := dotted(node.func)) is not None and canonical(opener) in _OPENERS]
    return bool(modes) and all(mode is not None and not _WRITING & set(mode) for mode in modes)


def _handed_whole(expr, func, depth: int) -> bool:
    """Whether ``expr`` is a path as the function was handed it: a
    parameter, an attribute or a constant key of one (``args.config``,
    ``self.cfg["path"]``), or a local every binding of which is one."""
    t = type(expr)
    if t is ast.Name:
        if _is_parameter(func, expr.id):
            return True
        if depth >= _MAX_DEPTH:
            return False
        values = local_values(func, expr.id)
        return bool(values) and all(_handed_whole(v, func, depth + 1) for v in values)
    if t is ast.Attribute:
        return plain_dotted(expr) is not None
    if t is ast.Subscript:
        key = expr.slice
        return type(key) is ast.Constant and type(key.value) is str and _handed_whole(expr.value, func, depth)
    return False


def _is_parameter(func, name: str) -> bool:
    args = getattr(func, "args", None)
    return args is not None and any(a is not None and a.arg == name for a in (
        *args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg))


def _open_mode(call: ast.Call) -> Optional[str]:
    """The mode ``open(path, mode)`` opens with ("r" where none is given), or
    None where it is not a constant."""
    mode = call.args[1] if len(call.args) > 1 else next((kw.value for kw in call.keywords if kw.arg == "mode"), None)
    if mode is None:
        return "r"
    return mode.value if type(mode) is ast.Constant and type(mode.value) is str else None
