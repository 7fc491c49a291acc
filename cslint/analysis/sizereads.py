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
what they hold.  A ``:=`` binds as an assignment does, ``(tag, self.size) =
...`` stores each field it names, a function nested in a method stores into
that method's ``self``, and a name declared ``global`` (``nonlocal``) is the
module's (the enclosing function's): its bindings there count for every read
of it.  Size names are told in any case (``World_Size``).
"""

from __future__ import annotations

import ast

from ..presets.rank_names import is_size_name
from .astwalk import BLOCKS_OF, own_nodes, param_names, scoped_walk
from .bindings import flatten_targets, pairwise
from .callrefs import first_positional_param
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

    __slots__ = ("fields", "unheld", "unheld_fields", "_tree", "_job_tests", "_walrus")

    def __init__(self, fields: frozenset = frozenset(), tree=None, job_tests: frozenset = frozenset(),
                 walrus: bool = True):
        self.fields = fields
        self._tree = tree
        self._job_tests = job_tests
        self._walrus = walrus  # (whether the module may bind a size-named name with a ``:=``)
        if tree is None:
            self.unheld = self.unheld_fields = frozenset()

    def __getattr__(self, name: str):
        # (called only while ``unheld`` and ``unheld_fields`` are not set)
        if name not in ("unheld", "unheld_fields"):
            raise AttributeError(name)
        self.unheld, self.unheld_fields = size_reads_of(self._tree, self.fields, self._job_tests, self._walrus)
        return getattr(self, name)

    def __contains__(self, attr) -> bool:
        return attr in self.fields


#: the characters of an ASCII name, the digits it cannot start with, and the spaces ``\s`` matches in bytes, for
#: text and for bytes (:func:`walrus_targets`; text spaces are those ``str.isspace`` takes, as ``\s`` does there)
_NAME_CHARS = {str: frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_"),
               bytes: frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")}
_DIGITS = {str: frozenset("0123456789"), bytes: frozenset(b"0123456789")}
_BYTE_SPACES = frozenset(b" \t\n\r\x0b\x0c")


def walrus_targets(source) -> list:
    r"""The names ``name :=`` binds in a module's source, text or bytes, in order (a string or a comment may hold
    one too: a superset): what ``re.findall(r"(?<![A-Za-z_])([A-Za-z_][A-Za-z0-9_]*)\s*:=", source)`` finds,
    read back from each ``:=`` the source holds (``str.find``) instead of matched at every name of the module
    (0.48 s for the 273 files of vLLM holding a ``:=``, 0.013 s so).  Back from a ``:=`` past the spaces, the run
    of name characters there less its leading digits is what the pattern matches: it starts at the first letter
    or ``_`` of the run (before it stand only digits, which the look-behind lets pass) and reads to the run's
    end, and each ``:=`` ends at most one match."""
    kind = type(source)
    name_chars, digits = _NAME_CHARS[kind], _DIGITS[kind]
    marker = ":=" if kind is str else b":="
    find, names = source.find, []
    at = find(marker)
    while at >= 0:
        end = at
        if kind is str:
            while end and source[end - 1].isspace():
                end -= 1
        else:
            while end and source[end - 1] in _BYTE_SPACES:
                end -= 1
        start = end
        while start and source[start - 1] in name_chars:
            start -= 1
        while start < end and source[start] in digits:
            start += 1
        if start < end:
            names.append(source[start:end])
        at = find(marker, at + 2)
    return names


def walrus_may_bind_size(source) -> bool:
    """Whether ``source`` (text or bytes) may bind a size-named name with a
    ``:=`` (:attr:`ModuleContext.walrus_binds_size`): most modules bind none,
    and :func:`size_reads_of` then walks no expression for one."""
    for name in walrus_targets(source):
        if is_size_name(name if type(name) is str else name.decode("ascii")):
            return True
    return False


def size_reads_of(tree: ast.Module, fields: frozenset, job_tests: frozenset, walrus: bool = True) -> tuple:
    """``(unheld, unheld_fields)`` of :class:`SizeReads` for a module's
    syntax tree (``fields``: its size fields; ``job_tests``: the last names
    of the presets' job tests, ``is_initialized``; ``walrus``: whether the
    module may bind a size-named name with a ``:=``, :func:`walrus_may_bind_size`).  One walk of each scope's statements (the
    module, each class body and function) collects the bindings of
    size-named names, each with the parameters of the scope it is made in;
    only a scope where one holds no size is walked again, for the reads of
    it.  A name a function declares ``global`` is bound in the module, one
    it declares ``nonlocal`` in the enclosing function binding it; a nested
    function's ``self.attr = ...`` stores into the field of the method it
    is nested in."""
    scopes: list = []  # (scope node, {name: [(value or None, (parameters, id(scope made in)))]})
    stores: list = []  # (parameters, scope node, attr, value or None) of the size fields of ``self``
    declared: list = []  # (scope node, the names it declares global) for the reads of them there
    module_names: dict = {}
    pending = [(tree, frozenset(), ())]  # (scope, the receivers of the methods it is nested in, enclosing functions)
    while pending:
        scope, outer_selves, enclosing = pending.pop()
        params = param_names(scope)
        # (its first positional parameter, posonly too, may be an object whose size fields it stores: a method's
        # ``self``, a staticmethod's or a function's ``obj`` handed one)
        first = first_positional_param(scope) if type(scope) in _SCOPES else None
        selves = outer_selves - params  # (a parameter of its own hides an enclosing method's receiver)
        if first is not None:
            selves = selves | {first}
        names: dict = module_names if scope is tree else {}
        shared: dict = {}  # name -> the names table it is bound in, for ``global``/``nonlocal`` names
        inner = (*enclosing, (params, names)) if type(scope) in _SCOPES else enclosing
        origin = (params, id(scope))
        stack = list(scope.body)
        while stack:
            stmt = stack.pop()
            t = type(stmt)
            if t in _DEFINITIONS:
                pending.append((stmt, selves, inner))
                continue
            if t is ast.Assign or t is ast.AnnAssign or t is ast.AugAssign:
                value = stmt.value
                if value is not None:
                    for target in (stmt.targets if t is ast.Assign else (stmt.target,)):
                        kind = type(target)
                        if kind is ast.Name:
                            if _may_name_size(target.id) and is_size_name(target.id):
                                names.setdefault(target.id, []).append((value, origin))
                        elif kind is ast.Attribute:
                            _note_field(target, value, selves, fields, params, scope, stores)
                        else:  # an unpacking: element by element where it is paired
                            for leaf, element in _unpacked(target, value):
                                if type(leaf) is ast.Attribute:
                                    _note_field(leaf, element, selves, fields, params, scope, stores)
                                elif is_size_name(leaf.id):
                                    names.setdefault(leaf.id, []).append((element, origin))
            elif t is ast.For or t is ast.AsyncFor:
                _note_unknown(stmt.target, names, origin, selves, fields, params, scope, stores)
            elif t is ast.With or t is ast.AsyncWith:
                for item in stmt.items:
                    if item.optional_vars is not None:
                        _note_unknown(item.optional_vars, names, origin, selves, fields, params, scope, stores)
            elif t is ast.ExceptHandler and stmt.name and is_size_name(stmt.name):
                names.setdefault(stmt.name, []).append((None, origin))
            elif (t is ast.Global or t is ast.Nonlocal) and scope is not tree:
                for name in stmt.names:
                    if is_size_name(name):
                        shared[name] = module_names if t is ast.Global else _binding_table(name, enclosing)
                if t is ast.Global:
                    declared.append((scope, frozenset(stmt.names)))
            for name in BLOCKS_OF[t]:
                block = getattr(stmt, name)
                if block:
                    stack += block
        if walrus:
            for node in own_nodes(scope):
                if type(node) is ast.NamedExpr and is_size_name(node.target.id):
                    names.setdefault(node.target.id, []).append((node.value, origin))
        for name, table in shared.items():  # bound where it is declared to be
            if name in names and table is not None:
                table.setdefault(name, []).extend(names[name])  # (and still bound here: its reads and its other bindings here)
        scopes.append((scope, names))
    return _decide(scopes, stores, fields, job_tests, declared, module_names)


def _binding_table(name: str, enclosing: tuple):
    """The names table of the nearest enclosing function binding ``name``
    (a parameter, or a size-named binding met so far), else of the nearest
    one; None outside any."""
    for params, names in reversed(enclosing):
        if name in params or name in names:
            return names
    return enclosing[-1][1] if enclosing else None


def _note_field(target: ast.Attribute, value, selves: frozenset, fields: frozenset, params, scope, stores: list) -> None:
    """A store ``self.attr = value`` (``value`` None where not known) of a
    size field or a size-named one, ``self`` a receiver of ``selves``."""
    attr = target.attr
    if type(target.value) is ast.Name and target.value.id in selves \
            and (attr in fields or _may_name_size(attr) and is_size_name(attr)):
        stores.append((params, scope, attr, value))


def _may_name_size(name: str) -> bool:
    """A cheap first look (every size name has one of these words, in any case) before :func:`is_size_name`."""
    lowered = name.lower()
    return "size" in lowered or "ranks" in lowered


def _unpacked(target, value):
    """``(leaf, value)`` of each name or attribute an unpacking target
    binds: ``a, b = x, y`` pairs element by element; any other unpacking
    binds each to an element not known (None)."""
    pairs = pairwise([target], value)
    if pairs is None:
        for leaf in _leaves(target):
            yield leaf, None
        return
    for inner, element in pairs:
        if type(inner) is ast.Name or type(inner) is ast.Attribute:
            yield inner, element
        elif type(inner) in (ast.Tuple, ast.List, ast.Starred):
            yield from _unpacked(inner, element)


def _leaves(target) -> list:
    """The names and attributes a target binds, nested unpackings and ``*`` included."""
    return [leaf for leaf in flatten_targets(target) if type(leaf) is ast.Name or type(leaf) is ast.Attribute]


def _note_unknown(target, names: dict, origin: tuple, selves, fields, params, scope, stores: list) -> None:
    """A loop's or a ``with``'s target: each size name or size field of
    ``self`` it binds holds what is not known."""
    if type(target) is ast.Name:
        if _may_name_size(target.id) and is_size_name(target.id):
            names.setdefault(target.id, []).append((None, origin))
        return
    for leaf in _leaves(target):
        if type(leaf) is ast.Attribute:
            _note_field(leaf, None, selves, fields, params, scope, stores)
        elif is_size_name(leaf.id):
            names.setdefault(leaf.id, []).append((None, origin))


def _decide(scopes: list, stores: list, fields: frozenset, job_tests: frozenset, declared: list,
            module_names: dict) -> tuple:
    """The names and fields whose bindings do not all hold a size, to a
    fixpoint (``world_size = dp_size`` holds what ``dp_size`` holds; each
    binding read with the parameters and names of the scope it is made in).
    The reads of a name a function declares ``global`` are those of the
    module's name."""
    scopes = [entry for entry in scopes if entry[1]]  # only a scope binding a size name has names to decide
    if not scopes and not stores:
        return frozenset(), frozenset()
    unheld_names: dict = {}  # id(scope) -> its names some binding of which holds no size
    unheld_fields: set = set()
    changed = True
    while changed:
        changed = False
        for scope, names in scopes:
            bad = unheld_names.setdefault(id(scope), set())
            for name, values in names.items():
                if name not in bad and not all(
                        value is not None and _holds_size(value, made_params, unheld_names.get(made_in, ()),
                                                          unheld_fields, fields, job_tests)
                        for value, (made_params, made_in) in values):
                    bad.add(name)
                    changed = True
        for params, scope, attr, value in stores:
            if attr not in unheld_fields and (value is None or not _holds_size(
                    value, params, unheld_names.get(id(scope), ()), unheld_fields, fields, job_tests)):
                unheld_fields.add(attr)
                changed = True
    reads = set()
    walks = [(scope, frozenset(unheld_names[id(scope)])) for scope, _names in scopes]
    if declared and module_names:
        module_scope = next(scope for scope, names in scopes if names is module_names)
        bad_globals = unheld_names[id(module_scope)]
        walks += [(scope, names & bad_globals) for scope, names in declared]
    for scope, bad in walks:
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
