"""Which reads of a size-named name hold a group's size (issues 12 and 14).

A group's size is the same on every rank, so a test of one against 1 says
where the group has one rank (:func:`~cslint.analysis.syntax.single_rank_side`)
and ``world_size > 1`` holds in any world of several ranks
(:mod:`~cslint.analysis.feasibility`).  A name says so only where what it
holds is a size: ``dp_size = len(self.my_requests)`` holds this rank's own
count whatever it is called, and ``if dp_size == 1:`` is then an ordinary
test of a rank-local value, read by what the name holds.

A size-named local (``syntax.is_size_expr`` of the bare name) holds a size
where every binding of it in its function (or at module level) does, and a
size-named field of ``self`` where every ``self.attr = ...`` of the module
does (:func:`size_reads_of`).  A value holds a size when it is built only
from sizes: an int constant or None, a size read (a size call such as
``get_world_size(group)``, a size-named attribute, another size-named name
that holds one), a parameter (what the callers hand in), a size-named key
(``os.environ["WORLD_SIZE"]``, ``config.get("tp_size", 1)``), and
arithmetic, ``int``/``min``/``max``, ``or`` and conditional expressions of
those (the test of the latter read from sizes, parameters, constants and the
presets' job tests, ``dist.is_initialized()``).  Anything else --
``len(...)`` of a list, an element unpacked from a call's result, a loop's or
a ``with``'s target, a name of no size -- may differ between ranks: its reads
are left out (:class:`SizeReads`), and the tests that read them are tested as
what they hold.  A ``:=`` is not read (no statement binds it).
"""

from __future__ import annotations

import ast

from ..presets.rank_names import is_size_name
from .astwalk import BLOCKS_OF, scoped_walk
from .bindings import pairwise, param_names, target_names
from .grouptests import is_size_expr
from .syntax import dotted

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef)
_DEFINITIONS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})  # each a scope of its own
#: builtins that make a size of sizes
_SIZE_OF_SIZES = frozenset({"int", "min", "max", "abs"})
#: calls reading a key: ``os.environ.get("WORLD_SIZE")``, ``os.getenv("WORLD_SIZE", 1)``
_KEY_READS = frozenset({"get", "getenv"})


class SizeReads:
    """The size reads of a module: ``fields``, the ``self`` fields every
    assignment of which sets a group's size (:attr:`ModuleContext.size_fields`),
    what ``sizes`` means to :func:`~cslint.analysis.syntax.is_size_expr`
    (``attr in sizes``); ``unheld``: the ``id()`` of each read of a
    size-named local some binding of which holds no size; ``unheld_fields``:
    the fields of ``self``, size-named or among ``fields``, some
    assignment of which in the module holds no size (``self.sync_size =
    dp_size`` of such a local).  The last two are worked out on first use
    (:func:`size_reads_of`): most modules never read a size by its name."""

    __slots__ = ("fields", "unheld", "unheld_fields", "_tree", "_job_tests")

    def __init__(self, fields: frozenset = frozenset(), tree=None, job_tests: frozenset = frozenset()):
        self.fields = fields
        self._tree = tree
        self._job_tests = job_tests
        if tree is None:
            self.unheld = self.unheld_fields = frozenset()

    def __getattr__(self, name: str):
        # (called only while ``unheld`` and ``unheld_fields`` are not set)
        if name not in ("unheld", "unheld_fields"):
            raise AttributeError(name)
        self.unheld, self.unheld_fields = size_reads_of(self._tree, self.fields, self._job_tests)
        return getattr(self, name)

    def __contains__(self, attr) -> bool:
        return attr in self.fields


def size_reads_of(tree: ast.Module, fields: frozenset, job_tests: frozenset) -> tuple:
    """``(unheld, unheld_fields)`` of :class:`SizeReads` for a module's
    syntax tree (``fields``: its size fields; ``job_tests``: the last names
    of the presets' job tests, ``is_initialized``).  One walk of each
    scope's statements (the module, each class body and function) collects
    the bindings of size-named names; only a scope where one holds no size
    is walked again, for the reads of it."""
    scopes: list = []  # (scope node, parameters, {name: [value or None]})
    stores: list = []  # (parameters, scope node, attr, value or None) of the size fields of ``self``
    pending = [tree]
    while pending:
        scope = pending.pop()
        params = param_names(scope)
        args = scope.args.args if type(scope) in _SCOPES else None
        self_name = args[0].arg if args else None
        names: dict = {}
        stack = list(scope.body)
        while stack:
            stmt = stack.pop()
            t = type(stmt)
            if t in _DEFINITIONS:
                pending.append(stmt)
                continue
            if t is ast.Assign or t is ast.AnnAssign or t is ast.AugAssign:
                value = stmt.value
                if value is not None:
                    for target in (stmt.targets if t is ast.Assign else (stmt.target,)):
                        kind = type(target)
                        if kind is ast.Name:
                            if _may_name_size(target.id) and is_size_name(target.id):
                                names.setdefault(target.id, []).append(value)
                        elif kind is ast.Attribute:
                            attr = target.attr
                            if self_name is not None and type(target.value) is ast.Name \
                                    and target.value.id == self_name \
                                    and (attr in fields or _may_name_size(attr) and is_size_name(attr)):
                                stores.append((params, scope, attr, value))
                        else:  # an unpacking: element by element where it is paired
                            for inner, element in _unpacked(target, value):
                                if is_size_name(inner):
                                    names.setdefault(inner, []).append(element)
            elif t is ast.For or t is ast.AsyncFor:
                _note_unpacked(stmt.target, names)
            elif t is ast.With or t is ast.AsyncWith:
                for item in stmt.items:
                    if item.optional_vars is not None:
                        _note_unpacked(item.optional_vars, names)
            elif t is ast.ExceptHandler and stmt.name and is_size_name(stmt.name):
                names.setdefault(stmt.name, []).append(None)
            for name in BLOCKS_OF[t]:
                block = getattr(stmt, name)
                if block:
                    stack += block
        scopes.append((scope, params, names))
    return _decide(scopes, stores, fields, job_tests)


def _may_name_size(name: str) -> bool:
    """A cheap first look (every size name has one of these words) before :func:`is_size_name`."""
    return "size" in name or "ranks" in name or "SIZE" in name or "RANKS" in name


def _unpacked(target, value):
    """``(name, value)`` of each name an unpacking target binds: ``a, b = x,
    y`` pairs element by element; any other unpacking binds each name to an
    element not known (None)."""
    pairs = pairwise([target], value)
    if pairs is None:
        for name in target_names(target):
            yield name, None
        return
    for inner, element in pairs:
        if type(inner) is ast.Name:
            yield inner.id, element
        elif type(inner) in (ast.Tuple, ast.List, ast.Starred):
            yield from _unpacked(inner, element)


def _note_unpacked(target, names: dict) -> None:
    """A loop's or a ``with``'s target: each size name it binds holds what is not known."""
    if type(target) is ast.Name:
        if _may_name_size(target.id) and is_size_name(target.id):
            names.setdefault(target.id, []).append(None)
        return
    for name in target_names(target):
        if is_size_name(name):
            names.setdefault(name, []).append(None)


def _decide(scopes: list, stores: list, fields: frozenset, job_tests: frozenset) -> tuple:
    """The names and fields whose bindings do not all hold a size, to a
    fixpoint (``world_size = dp_size`` holds what ``dp_size`` holds)."""
    scopes = [entry for entry in scopes if entry[2]]  # only a scope binding a size name has names to decide
    if not scopes and not stores:
        return frozenset(), frozenset()
    unheld_names = {id(scope): set() for scope, _params, _names in scopes}
    unheld_fields: set = set()
    changed = True
    while changed:
        changed = False
        for scope, params, names in scopes:
            bad = unheld_names[id(scope)]
            for name, values in names.items():
                if name not in bad and not all(
                        value is not None and _holds_size(value, params, bad, unheld_fields, fields, job_tests)
                        for value in values):
                    bad.add(name)
                    changed = True
        for params, scope, attr, value in stores:
            if attr not in unheld_fields and (value is None or not _holds_size(
                    value, params, unheld_names.get(id(scope), ()), unheld_fields, fields, job_tests)):
                unheld_fields.add(attr)
                changed = True
    reads = set()
    for scope, _params, _names in scopes:
        bad = frozenset(unheld_names[id(scope)])
        if bad:
            for node, visible in scoped_walk(scope, bad):
                if type(node) is ast.Name and type(node.ctx) is ast.Load and node.id in visible:
                    reads.add(id(node))
    return frozenset(reads), frozenset(unheld_fields)


def _holds_size(value: ast.expr, params: frozenset, bad: set, bad_fields: set, fields, job_tests) -> bool:
    """Whether ``value`` is built only from sizes (see the module docstring)."""
    t = type(value)
    if t is ast.Constant:
        return value.value is None or type(value.value) is int
    if t is ast.Name:
        return value.id in params or (is_size_name(value.id) and value.id not in bad)
    if t is ast.BinOp:
        return all(_holds_size(side, params, bad, bad_fields, fields, job_tests) for side in (value.left, value.right))
    if t is ast.UnaryOp:
        return _holds_size(value.operand, params, bad, bad_fields, fields, job_tests)
    if t is ast.BoolOp:
        return all(_holds_size(v, params, bad, bad_fields, fields, job_tests) for v in value.values)
    if t is ast.IfExp:
        return _reads_sizes(value.test, params, bad, bad_fields, fields, job_tests) and all(
            _holds_size(arm, params, bad, bad_fields, fields, job_tests) for arm in (value.body, value.orelse))
    if t is ast.Subscript:
        return _size_key(value.slice)
    if t is ast.Attribute or t is ast.Call:
        text = dotted(value.func if t is ast.Call else value) or ""
        last = text.rpartition(".")[2]
        if t is ast.Attribute and text.startswith("self.") and text.count(".") == 1 and last in bad_fields:
            return False
        if t is ast.Call and type(value.func) is ast.Name and last in _SIZE_OF_SIZES:
            return bool(value.args) and not value.keywords and all(
                _holds_size(arg, params, bad, bad_fields, fields, job_tests) for arg in value.args)
        if t is ast.Call and last in _KEY_READS and value.args and _size_key(value.args[0]):
            return all(_holds_size(arg, params, bad, bad_fields, fields, job_tests) for arg in value.args[1:])
        # (not a bare ``.size``: a tensor's or an array's reads the same)
        return last != "size" and is_size_expr(value, SizeReads(fields))
    return False


def _reads_sizes(test: ast.expr, params: frozenset, bad: set, bad_fields: set, fields, job_tests) -> bool:
    """Whether a conditional expression's test reads only sizes, parameters,
    constants and the presets' job tests (``dist.is_initialized()``)."""
    t = type(test)
    if t is ast.Compare:
        return all(_reads_sizes(side, params, bad, bad_fields, fields, job_tests)
                   for side in (test.left, *test.comparators))
    if t is ast.BoolOp:
        return all(_reads_sizes(v, params, bad, bad_fields, fields, job_tests) for v in test.values)
    if t is ast.UnaryOp:
        return _reads_sizes(test.operand, params, bad, bad_fields, fields, job_tests)
    if t is ast.Call and not test.args and not test.keywords \
            and (dotted(test.func) or "").rpartition(".")[2] in job_tests:
        return True
    return _holds_size(test, params, bad, bad_fields, fields, job_tests)


def _size_key(key) -> bool:
    """A constant key naming a size (``"WORLD_SIZE"``, ``"tp_size"``)."""
    return type(key) is ast.Constant and type(key.value) is str and is_size_name(key.value.lower())
