"""Configuration files: a file a function is handed by a path it was given
whole, tests for and then only reads.

A question to the file system (``os.path.exists(path)``: the presets'
"local filesystem view") may be answered differently on each node: a file on
one node's disk, a checkpoint's ``latest`` file that rank 0 writes while the
others look for it.  A function that is handed a path whole (a parameter it
never binds again, a setting read from one or from a mapping it holds:
``config``, ``args.config_file``, ``cfg["path"]``), tests whether it is a file
and opens it for reading only, and hands it to nothing else, reads a file the
job was given as its input (a configuration file,
``if os.path.exists(config): return json.load(open(config))``): every rank is
handed the same name, and the file is there before the job starts, so the
answer is what the name is.  The test's result is then what its argument
holds (:func:`~cslint.analysis.callplans.plan_call`): a path a caller builds
from this rank's id, host name or process id still differs.

What is no configuration file: a file at a name the function puts under a
directory (``os.path.join(save_dir, "latest")``, an f-string) or a parameter
it binds again to one (``load_dir = os.path.join(load_dir, "latest")``): the
job's own output, which some rank writes while others look; a field of the
object itself (``self.latest_path``: what the object's own methods may write
there); a path the function also opens for writing or appending, or hands to
any other call than the test and a read-only ``open`` (``torch.save(obj,
path)``, ``shutil.copy(src, path)``, ``Path(path).write_text(...)``) but
those that read the name's text alone (``isinstance``, ``len``, a decoder of
the text itself: :data:`_TEXT_READERS`); a constant path (a file a node's own
disk holds); a directory's listing, a size, a time (only the existence tests
are read here).

The check stops at the function's boundary: a caller that hands a loader a
name it made under a directory (``load_config(os.path.join(load_dir,
"latest"))``) is not seen, and the loader's test counts as a configuration
file's (tests/test_analysis_config_files.py holds that shape as a known miss).
"""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import own_nodes, param_names
from .bindings import local_values
from .syntax import dotted
from .vocabulary import EXISTENCE_TESTS, STRUCTURE_BUILTINS

#: the calls opening a file: ``open(path, mode)``
_OPENERS = frozenset({"open", "io.open"})
#: calls that read the text of a name, never the file it names (canonical
#: names): a type or length test, a decoder of the text itself (a
#: configuration handed inline, base64 or JSON, in place of a path)
_TEXT_READERS = frozenset(STRUCTURE_BUILTINS) | frozenset({
    "base64.b64decode", "base64.urlsafe_b64decode", "base64.standard_b64decode", "json.loads", "ast.literal_eval",
})
#: the characters of a mode that writes
_WRITING = frozenset("wax+")
#: how many local names a path is followed through
_MAX_DEPTH = 4


def read_configuration(call: ast.Call, canonical, func, self_name: Optional[str]) -> bool:
    """Whether ``call`` (in ``func``, whose object is ``self_name`` in a
    method) tests for a file the function was handed whole and only reads
    (see the module docstring); ``canonical(text)``: a callee's text as the
    module's imports spell it out."""
    name = dotted(call.func)
    if not call.args or name is None or canonical(name) not in EXISTENCE_TESTS or func is None:
        return False
    path = call.args[0]
    params: set = set()  # the parameters the path is read from
    if not _handed_whole(path, func, param_names(func), self_name, params, 0):
        return False
    wanted = ast.dump(path)
    opened = False
    for node in own_nodes(func):
        t = type(node)
        if t is ast.Name:
            if type(node.ctx) is not ast.Load and node.id in params:
                return False  # bound again: no longer the name the function was handed
        elif t is ast.Call and _hands(node, path, wanted):
            callee = dotted(node.func)
            text = canonical(callee) if callee is not None else None
            if text in _OPENERS and node.args and _same(node.args[0], path, wanted):
                mode = _open_mode(node)
                if mode is None or _WRITING & set(mode):
                    return False
                opened = True
            elif text not in EXISTENCE_TESTS and text not in _TEXT_READERS:
                return False  # handed to a call that may write it, copy over it or make it
    return opened


def _hands(call: ast.Call, path, wanted: str) -> bool:
    """Whether ``call`` is handed ``path`` as an argument."""
    return any(_same(arg, path, wanted) for arg in call.args) or any(
        _same(kw.value, path, wanted) for kw in call.keywords)


def _same(expr, path, wanted: str) -> bool:
    """Whether ``expr`` is written as ``path`` is (``wanted``: its dump)."""
    if type(expr) is not type(path):
        return False
    return expr.id == path.id if type(expr) is ast.Name else ast.dump(expr) == wanted


def _handed_whole(expr, func, names: frozenset, self_name: Optional[str], params: set, depth: int) -> bool:
    """Whether ``expr`` is a path as the function was handed it: a
    parameter other than the method's object (``names``: the function's
    parameters), an attribute or a constant key of one (``args.config``,
    ``cfg["path"]``), or a local every binding of which is one; ``params``
    gathers the parameters it reads."""
    t = type(expr)
    if t is ast.Name:
        if expr.id in names:
            params.add(expr.id)
            return expr.id != self_name
        if depth >= _MAX_DEPTH:
            return False
        values = local_values(func, expr.id)
        return bool(values) and all(_handed_whole(v, func, names, self_name, params, depth + 1) for v in values)
    if t is ast.Attribute:
        return _handed_whole(expr.value, func, names, self_name, params, depth)
    if t is ast.Subscript:
        key = expr.slice
        return type(key) is ast.Constant and type(key.value) is str and _handed_whole(
            expr.value, func, names, self_name, params, depth)
    return False


def _open_mode(call: ast.Call) -> Optional[str]:
    """The mode ``open(path, mode)`` opens with ("r" where none is given), or
    None where it is not a constant."""
    mode = call.args[1] if len(call.args) > 1 else next((kw.value for kw in call.keywords if kw.arg == "mode"), None)
    if mode is None:
        return "r"
    return mode.value if type(mode) is ast.Constant and type(mode.value) is str else None
