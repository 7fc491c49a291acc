"""What the analysis reads off the syntax alone: texts of expressions,
assignment targets, the calls an expression makes in evaluation order, early
exits, and the shapes of tests that need no values (``world_size > 1``,
``not x``)."""

from __future__ import annotations

import ast
from typing import Optional

from ..presets import group_from_text
from ..presets.rank_names import names_world_rank, size_name_is_uniform
from .astwalk import BLOCKS_OF, DEFINITIONS, LOOPS, iter_children, walk as fast_walk, walked
from .cfg import is_process_exit


MAX_TEXT = 120


def short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 3] + "..."


def whole_text(node: ast.AST) -> str:
    """:func:`unparse`'s text of a node, not cut short: what a test of its text alone must read."""
    text = unparse(node)
    return text if len(text) < MAX_TEXT or not text.endswith("...") else " ".join(ast.unparse(node).split())


def unparse(node: ast.AST) -> str:
    """The short text of a node.  Kept on the node once made: a quarter of
    the texts asked for are asked again (a test's text by its condition and
    by the decision it belongs to), unparsing is the dearest part, and no
    part of the analysis changes a syntax tree once it is parsed (nodes it
    makes up, a dataclass's ``__init__``, are new objects).  A name or a
    chain of attributes of one (over half of the texts) is its
    :func:`dotted` text, which is what ``ast.unparse`` writes of it."""
    text = node.__dict__.get("_cslint_text")
    if text is None:
        t = type(node)
        chain = dotted(node) if t is _Name or t is _Attribute else None
        if chain is not None and "(" not in chain:  # (a call in the chain: its arguments are left out)
            text = short(chain)
        else:
            try:
                text = short(ast.unparse(node))
            except Exception:  # pragma: no cover - exotic nodes
                text = type(node).__name__
        node._cslint_text = text
    return text


def dotted(node: ast.AST) -> Optional[str]:
    """``a.b.c`` for Name/Attribute chains (``a.b().c`` gives ``a.b().c``).
    (Called for most calls and attributes of every analysed function:
    node types are compared by identity, the syntax tree has no subclasses
    of them, and a bare name or ``a.b`` is answered without a list.)"""
    t = type(node)
    if t is _Name:
        return node.id
    if t is _Attribute:
        value = node.value
        if type(value) is _Name:
            return value.id + "." + node.attr
    parts = []
    while True:
        if t is _Attribute:
            parts.append(node.attr)
            node = node.value
        elif t is _Name:
            parts.append(node.id)
            break
        elif t is _Call:
            inner = dotted(node.func)
            if inner is None:
                return None
            parts.append(inner + "()")
            break
        else:
            return None
        t = type(node)
    return ".".join(reversed(parts))


def annotation_text(annotation: ast.AST) -> Optional[str]:
    """The dotted name an annotation writes (``Foo``, ``zmq.Socket``), out
    or as a string (``"Foo"``); None for another form (``List[Foo]``)."""
    text = dotted(annotation)
    if text is None and type(annotation) is ast.Constant and isinstance(annotation.value, str):
        return annotation.value
    return text



#: the methods that make a new object (``Cls(...)`` runs them)
CONSTRUCTORS = frozenset({"__init__", "__new__", "__post_init__"})
#: the methods ``with Cls(...):`` runs on the object it makes (analysis/managed.py): a call of one is written with
#: the class's name too
CONTEXT_METHODS = frozenset({"__enter__", "__exit__", "__aenter__", "__aexit__"})


def called_as(qualname: str) -> tuple:
    """The names a call of the function is written with: its own, and for a
    constructor or a context method its class's too (``Exchange(group)``
    runs ``Exchange.__init__``, ``with Exchange(group):`` its
    ``__enter__``); none for ``<module>`` and the like."""
    parts = qualname.rsplit(".", 2)
    short = parts[-1]
    if short.startswith("<"):
        return ()
    if (short in CONSTRUCTORS or short in CONTEXT_METHODS) and len(parts) > 1 and not parts[-2].startswith("<"):
        return (short, parts[-2])
    return (short,)


_Name, _Attribute, _Call = ast.Name, ast.Attribute, ast.Call


def iter_statements(tree: ast.AST):
    """Every statement of a module, nested blocks and function bodies
    included, without visiting expressions (imports and assignments are
    statements, so a full ``ast.walk`` would visit ten times the nodes)."""
    stack = list(reversed(getattr(tree, "body", None) or []))
    blocks_of = BLOCKS_OF
    while stack:
        node = stack.pop()
        yield node
        for name in blocks_of[type(node)]:
            block = getattr(node, name)
            if block:
                stack.extend(reversed(block))


def top_level_definitions(tree: ast.Module) -> dict:
    """The module's functions and its classes' methods by qualified name."""
    out = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out[f"{node.name}.{item.name}"] = item
    return out


def returns_own_structure(function, adders) -> bool:
    """Whether some ``return`` statement of ``function`` hands back a value
    whose own structure (None-ness, length, kind) is kept apart from its
    elements': a list, tuple or comprehension written out, or a local name
    the function stores an element into (``out.append(x)``, ``out[k] = x``,
    a method of ``adders``), a local name bound to a list comprehension (its
    own structure is its generators') or the ``*args`` parameter (a tuple as
    long as the positional arguments its callers write out).  A caller's read
    of the result's own structure then reads that part alone
    (``Variant.return_own``)."""
    stored = set()
    returned = set()
    vararg = getattr(function.args, "vararg", None) if hasattr(function, "args") else None
    if vararg is not None:
        stored.add(vararg.arg)
    stack = list(function.body)
    while stack:
        node = stack.pop()
        t = type(node)
        if t is ast.FunctionDef or t is ast.AsyncFunctionDef or t is ast.ClassDef or t is ast.Lambda:
            continue
        if t is ast.Return:
            value = node.value
            if type(value) in (ast.List, ast.Tuple, ast.ListComp) or type(value) is ast.Dict and value.keys \
                    and all(k is not None for k in value.keys):  # (entries.returned_by_key: as many keys as written)
                return True
            if type(value) is ast.Name:
                returned.add(value.id)
        elif t is ast.Call:
            func = node.func
            if type(func) is ast.Attribute and func.attr in adders and type(func.value) is ast.Name:
                stored.add(func.value.id)
        elif t is ast.Subscript and type(node.ctx) is ast.Store and type(node.value) is ast.Name:
            stored.add(node.value.id)
        elif t is ast.Assign and type(node.value) is ast.ListComp:
            stored.update(target.id for target in node.targets if type(target) is ast.Name)
        stack.extend(iter_children(node))
    return not returned.isdisjoint(stored)


def constant_keyed(value) -> bool:
    """A dict display whose keys are all string constants written out
    (``{"tp": n, "pp": m}``; no ``**other``, no computed key): its length
    and kind are the code's."""
    return type(value) is ast.Dict and bool(value.keys) \
        and all(type(k) is ast.Constant and type(k.value) is str for k in value.keys)


def constant_key_read(value) -> Optional[str]:
    """The key of ``base["k"]`` (a constant string key, ``base`` a name or a
    call): a name bound to it keeps the value's own structure apart where a
    call returned that value under the key (``entries.key_read_own``).  None
    for any other value."""
    if type(value) is not ast.Subscript or type(value.value) not in (ast.Name, ast.Call):
        return None
    key = value.slice
    return key.value if type(key) is ast.Constant and type(key.value) is str else None


def assigned_names(node: ast.AST) -> list:
    names = []
    if isinstance(node, ast.Assign):
        for target in node.targets:
            names.extend(target_names(target))
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        names.extend(target_names(node.target))
    return names


def target_names(target: ast.AST) -> list:
    t = type(target)  # (the parser makes no subclasses of node types)
    if t is ast.Name:
        return [target.id]
    if t is ast.Tuple or t is ast.List:
        out = []
        for elt in target.elts:
            out.extend(target_names(elt))
        return out
    if t is ast.Starred:
        return target_names(target.value)
    return []


def local_values(func, name: str) -> Optional[list]:
    """The values every binding of the local ``name`` in ``func`` assigns
    (its own body, nested definitions aside; ``name = value`` with one target
    and ``name: T = value``), or None where ``name`` is a parameter or some
    binding is of another form (a tuple or chained target, a loop, ``with``,
    augmented or annotated-only assignment, an import, ``global``/``nonlocal``,
    an ``except`` name, a definition, a ``:=``)."""
    args = getattr(func, "args", None)
    if args is None or any(a.arg == name for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg,
                                                   args.kwarg) if a is not None):
        return None
    values = []
    stack = list(func.body)
    while stack:
        node = stack.pop()
        t = type(node)
        if t is ast.FunctionDef or t is ast.AsyncFunctionDef or t is ast.ClassDef:
            if node.name == name:
                return None
            continue
        if t is ast.Assign:
            for target in node.targets:
                if type(target) is ast.Name and target.id == name and len(node.targets) == 1:
                    values.append(node.value)
                elif name in target_names(target):
                    return None
        elif t is ast.AnnAssign:
            if type(node.target) is ast.Name and node.target.id == name:
                if node.value is None:
                    return None
                values.append(node.value)
        elif t is ast.AugAssign or t is ast.For or t is ast.AsyncFor:
            if name in target_names(node.target):
                return None
        elif t is ast.With or t is ast.AsyncWith:
            if any(item.optional_vars is not None and name in target_names(item.optional_vars) for item in node.items):
                return None
        elif t is ast.Import or t is ast.ImportFrom:
            if any((alias.asname or alias.name.partition(".")[0]) == name for alias in node.names):
                return None
        elif t is ast.Global or t is ast.Nonlocal:
            if name in node.names:
                return None
        elif t is ast.Try or t is getattr(ast, "TryStar", None):
            if any(handler.name == name for handler in node.handlers):
                return None
        stack.extend(child for field in BLOCKS_OF[t] for child in getattr(node, field))
    # (a ``:=`` is rare: one walk of the function, asked last)
    if values and any(type(node) is ast.NamedExpr and node.target.id == name for node in fast_walk(func)):
        return None
    return values


def flatten_targets(target):
    t = type(target)
    if t is ast.Tuple or t is ast.List:
        for elt in target.elts:
            yield from flatten_targets(elt)
    elif t is ast.Starred:
        yield from flatten_targets(target.value)
    else:
        yield target


def pairwise(targets, value):
    """``a, b = x, y`` -> [(a, x), (b, y)]; None for anything else."""
    if len(targets) != 1 or not isinstance(value, (ast.Tuple, ast.List)):
        return None
    target = targets[0]
    if not isinstance(target, (ast.Tuple, ast.List)) or len(target.elts) != len(value.elts):
        return None
    if any(isinstance(e, ast.Starred) for e in list(target.elts) + list(value.elts)):
        return None
    return list(zip(target.elts, value.elts))


_COMPREHENSIONS = frozenset({ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp})


def calls_in_order(expr: ast.AST):
    """Calls inside an expression with the inline conditions that guard them:
    yields (call, [(kind, cond_expr, owner_node, side)]) where side is the
    branch of a ternary/short-circuit the call sits on.  Lambdas and nested
    definitions are skipped (they run later, elsewhere)."""
    out = []

    def visit(node, conds):
        t = type(node)  # (the parser makes no subclasses of its node types)
        if t in DEFINITIONS or t is ast.Name or t is ast.Constant:  # (a name or a constant holds no call)
            return
        if t is ast.BoolOp:
            for index, value in enumerate(node.values):
                extra = [("branch", v, node, ("bool", index)) for v in node.values[:index]]
                visit(value, conds + extra)
            return
        if t is ast.IfExp:
            visit(node.test, conds)
            visit(node.body, conds + [("branch", node.test, node, "body")])
            visit(node.orelse, conds + [("branch", node.test, node, "orelse")])
            return
        if t in _COMPREHENSIONS:
            inner = list(conds)
            for index, gen in enumerate(node.generators):
                visit(gen.iter, inner)
                inner = inner + [("loop", gen.iter, node, ("gen", index))]
                for cond in gen.ifs:
                    visit(cond, inner)
                    inner = inner + [("branch", cond, node, "if")]
            if t is ast.DictComp:
                visit(node.key, inner)
                visit(node.value, inner)
            else:
                visit(node.elt, inner)
            return
        if t is ast.Call:
            # arguments are evaluated before the call happens
            visit(node.func, conds)
            for arg in node.args:
                visit(arg, conds)
            for kw in node.keywords:
                visit(kw.value, conds)
            out.append((node, conds))
            return
        for child in iter_children(node):
            visit(child, conds)

    visit(expr, [])
    visit = None  # the nested function refers to itself: without this, a reference cycle per call
    return out


def first_exit_in(stmts, loop=False):
    for stmt in stmts:
        found = first_exit(stmt, loop)
        if found is not None:
            return found
    return None


def first_exit(stmt, loop=False):
    """The first return/raise/continue/break inside a statement (break and
    continue only when they leave this level, not an inner loop)."""
    t = type(stmt)
    if t is ast.Return or t is ast.Raise or t is ast.Continue or t is ast.Break or (t is ast.Expr and is_process_exit(stmt)):
        return stmt
    if t is ast.FunctionDef or t is ast.AsyncFunctionDef or t is ast.ClassDef:
        return None
    inner_loop = t is ast.For or t is ast.AsyncFor or t is ast.While
    blocks = _EXIT_BLOCKS.get(t)
    if blocks is None:  # (worked out once per type: most statements have none)
        blocks = _EXIT_BLOCKS[t] = tuple(name for name in _EXIT_FIELDS if name in getattr(t, "_fields", ()))
    for name in blocks:
        for child in getattr(stmt, name, None) or ():
            found = first_exit(child, loop)
            if found is not None and not (inner_loop and not loop and type(found) in (ast.Continue, ast.Break)):
                return found
    return None


_EXIT_FIELDS = ("body", "orelse", "handlers", "finalbody", "cases")
_EXIT_BLOCKS: dict = {}  # node type -> the fields of _EXIT_FIELDS it has

_NEGATED_OPS = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE,
                ast.LtE: ast.Gt, ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In}


def fold_bool_op(op: ast.boolop, values: list) -> Optional[bool]:
    """``and``/``or`` over operands known True, False or not known (None):
    the answer when the known ones decide it, else None."""
    if isinstance(op, ast.And):
        if any(v is False for v in values):
            return False
        return True if all(v is True for v in values) else None
    if any(v is True for v in values):
        return True
    return False if all(v is False for v in values) else None


def negation_text(test: ast.expr) -> Optional[str]:
    """Source text of the logical negation of a simple test, or None."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return ast.unparse(test.operand)
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _NEGATED_OPS:
        flipped = ast.Compare(left=test.left, ops=[_NEGATED_OPS[type(test.ops[0])]()], comparators=test.comparators)
        return ast.unparse(flipped)
    return ast.unparse(ast.UnaryOp(op=ast.Not(), operand=test))


_SIZE_CALLS = {"get_world_size", "Get_size", "size", "get_size", "world_size"}


def is_size_expr(expr: ast.expr, sizes=()) -> bool:
    """Whether ``expr`` reads a group's size (``world_size``,
    ``get_tp_size()``, ``group.size()``); ``sizes``: the fields of the file
    that every assignment makes a size (:attr:`ModuleContext.size_fields`),
    so ``self.sync_size`` is one too."""
    if isinstance(expr, ast.Call):
        name = dotted(expr.func) or ""
        last = name.rsplit(".", 1)[-1]
        if last in _SIZE_CALLS or (last.startswith("get_") and size_name_is_uniform(last[4:])) \
                or (last.startswith("_") and size_name_is_uniform(last.lstrip("_"))):
            return True
        # a size read by its name: ``getattr(dist, "tp_size", 1)``, ``size_of(dist, "cp_size")``
        return (last == "getattr" or "size" in last.lower()) and any(
            isinstance(arg, ast.Constant) and isinstance(arg.value, str) and size_name_is_uniform(arg.value)
            for arg in expr.args)
    text = dotted(expr)
    if not text:
        return False
    last = text.rsplit(".", 1)[-1]
    if sizes and last in sizes and text.startswith("self.") and text.count(".") == 1:
        return True
    return last in ("size", "nranks", "world_size") or size_name_is_uniform(last)


#: the builtin conversions to a scalar: what they return is of that type, whatever they convert
_SCALAR_CONVERSIONS = frozenset({"int", "float", "bool", "str", "complex"})


def scalar_kind(expr) -> Optional[str]:
    """The scalar type a literal (not None) or a builtin conversion
    (``int(x)``) makes, else None."""
    t = type(expr)
    if t is ast.Constant:
        return None if expr.value is None else type(expr.value).__name__
    if t is ast.Call and type(expr.func) is ast.Name and expr.func.id in _SCALAR_CONVERSIONS:
        return expr.func.id
    return None


def param_names(func) -> frozenset:
    """Every parameter name of a function definition (``*args`` and
    ``**kwargs`` by their bare names); empty for the module body."""
    args = getattr(func, "args", None)
    if args is None:
        return frozenset()
    every = args.posonlyargs + args.args + args.kwonlyargs + [a for a in (args.vararg, args.kwarg) if a is not None]
    return frozenset(a.arg for a in every)


def int_equality(test: ast.expr) -> Optional[tuple]:
    """``(side, K, holds_when_equal)`` of ``side == K`` / ``side != K`` (or
    ``K == side``), ``K`` an int constant: the test a rank comparison is
    written as; None for any other test."""
    if type(test) is not ast.Compare or len(test.ops) != 1:
        return None
    op = type(test.ops[0])
    if op is not ast.Eq and op is not ast.NotEq:
        return None
    left, right = test.left, test.comparators[0]
    if type(left) is ast.Constant:
        left, right = right, left
    if type(right) is not ast.Constant or type(right.value) is not int:
        return None
    return left, right.value, op is ast.Eq


def single_rank_side(test: ast.expr, sizes=(), fold=None):
    """The branch label (True/False) of a test that holds only when a group
    has one rank: ``size == 1`` -> True, ``world_size > 1`` -> False
    (``sizes``: as for :func:`is_size_expr`); ``group is None`` -> True for
    a group named by a parallel dimension (:func:`is_named_group`: that
    group is not set up, so this process has no peers in it).  An
    ``and``/``or`` of such tests has the side its operands force: ``not (A
    and g is not None)`` holds only where some operand fails, and each one
    that can fail (``fold``, the function's test folder, settles the others:
    ``dist.is_initialized()`` holds in a world of several ranks) fails only
    where the group has one rank."""
    kind = type(test)
    if kind is ast.UnaryOp and isinstance(test.op, ast.Not):
        inner = single_rank_side(test.operand, sizes, fold)
        return None if inner is None else not inner
    if kind is ast.BoolOp:
        return _bool_op_side(test, sizes, fold)
    if kind is not ast.Compare or len(test.ops) != 1:
        return None
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if type(right) is ast.Constant and right.value is None and type(op) in (ast.Is, ast.IsNot):
        if not is_named_group(left):
            return None
        return type(op) is ast.Is
    if isinstance(left, ast.Constant) and is_size_expr(right, sizes):
        mirror = {ast.Lt: ast.Gt, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.GtE: ast.LtE, ast.Eq: ast.Eq, ast.NotEq: ast.NotEq}
        if type(op) not in mirror:
            return None
        left, op, right = right, mirror[type(op)](), left
    if not (is_size_expr(left, sizes) and isinstance(right, ast.Constant) and isinstance(right.value, int)):
        return None
    k = right.value
    single_when_true = {(ast.Eq, 1), (ast.LtE, 1), (ast.Lt, 2)}
    multi_when_true = {(ast.Gt, 1), (ast.GtE, 2), (ast.NotEq, 1)}
    if (type(op), k) in single_when_true:
        return True
    if (type(op), k) in multi_when_true:
        return False
    return None


def several_rank_side(test: ast.expr, sizes=()) -> Optional[bool]:
    """The branch label (True/False) of a test that holds only when a group
    has several ranks: ``world_size > 1`` -> True, ``size == 1`` -> False.
    Only a comparison of a size with a number (under ``not``) has one: the
    other side of :func:`single_rank_side`'s ``group is None`` or of an
    ``and``/``or`` may still be a group of one rank."""
    inner, flips = test, False
    while type(inner) is ast.UnaryOp and isinstance(inner.op, ast.Not):
        inner, flips = inner.operand, not flips
    if type(inner) is not ast.Compare or len(inner.ops) != 1 \
            or not any(type(side) is ast.Constant and type(side.value) is int
                       for side in (inner.left, inner.comparators[0])):
        return None
    single = single_rank_side(inner, sizes)
    return None if single is None else (single if flips else not single)


def _bool_op_side(test: ast.BoolOp, sizes, fold) -> Optional[bool]:
    """:func:`single_rank_side` of ``a and b`` / ``a or b``: the label on
    which the operand that decides it must be a single-rank side.  An
    operand ``fold`` settles (True in an ``and``, False in an ``or``) never
    decides; the others must each be such a test."""
    conjunction = type(test.op) is ast.And
    sides = []
    for value in test.values:
        settled = fold(value) if fold is not None else None
        if settled is conjunction:
            continue  # holds (an ``and``) or fails (an ``or``) on every path run
        sides.append(single_rank_side(value, sizes, fold))
    if not sides:
        return None
    if conjunction:
        # true: every operand holds, one that holds only for one rank is enough;
        # false: the operand that fails must be one failing only for one rank
        if True in sides:
            return True
        return False if all(side is False for side in sides) else None
    if False in sides:
        return False
    return True if all(side is True for side in sides) else None


def is_named_group(expr: ast.expr) -> bool:
    """``self.dp_tp_cpu_group``, ``tp_group``: a name or field whose last
    part is a process group named by a parallel dimension (not the world's,
    not an unnamed ``group``)."""
    text = dotted(expr)
    if not text:
        return False
    last = text.rsplit(".", 1)[-1]
    if "group" not in last.lower():
        return False
    named = group_from_text(last)
    return named is not None and named != "world"


def tests_membership(text: str, members: str) -> bool:
    """``rank in ranks`` (or ``not in``) where ``ranks`` made the collective's
    group with ``new_group(ranks)``: only the group's members get past it,
    which is exactly who must enter a collective over that group.  The list
    holds world ranks: ``local_rank in ranks`` is no membership."""
    for op in (" not in ", " in "):
        left, found, right = text.partition(op)
        if found:
            left = left.strip()
            return right.strip() == members and names_world_rank(left[4:] if left.startswith("not ") else left)
    return False



def plain_dotted(node: ast.expr) -> Optional[str]:
    """``a.b.c`` for a chain of names and attributes without calls."""
    parts = []
    while type(node) is _Attribute:
        parts.append(node.attr)
        node = node.value
    if type(node) is not _Name:
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


class ReadNames:
    """Which plain dotted names (``a``, ``a.b``) a piece of code reads,
    ``x.attr`` and ``x[i]`` counting as reads of ``x``.  Each statement is
    walked once and its answer kept: every exit of a function asks about all
    that it skips, so the same statements are asked about again and again.
    The nodes asked about must stay alive as long as this object (their
    ``id`` is the key)."""

    def __init__(self):
        self._by_node: dict = {}  # id(node) -> the names it reads

    def reads(self, nodes, text: str) -> bool:
        """Whether any of ``nodes`` (statements or expressions) reads
        ``text`` (a dotted name) or something under it."""
        return any(text in self.names_read(node) for node in nodes)

    def names_read(self, root: ast.AST) -> frozenset:
        found = self._by_node.get(id(root))
        if found is None:
            found = self._by_node[id(root)] = frozenset(
                plain_dotted(node) for node in walked(root)
                if type(node) in (ast.Name, ast.Attribute) and type(node.ctx) is ast.Load) - {None}
        return found


def tests_own_group(text: str, groups) -> bool:
    """Whether a condition only asks if this rank belongs to one of
    ``groups`` (the texts naming the group a collective runs over):
    ``group is None``, ``not group``, ``_rank_not_in_group(group)``,
    ``group == GroupMember.NON_GROUP_MEMBER``.  A rank outside the group
    takes no part in its collectives, and every member answers alike."""
    for group in groups:
        if text in (group, f"not {group}", f"{group} is None", f"{group} is not None",
                    f"{group} == None", f"{group} != None"):
            return True
        for op in (" == ", " != ", " is ", " is not "):
            left, found, right = text.partition(op)
            if found and left == group and right.rsplit(".", 1)[-1].upper() == "NON_GROUP_MEMBER":
                return True
        head, paren, rest = text.partition("(")
        head = head.strip()
        head = head[len("not "):] if head.startswith("not ") else head
        name = head.rsplit(".", 1)[-1].lower()
        if paren and rest.rstrip(")").split(",")[0].strip() == group and "group" in name \
                and ("in_group" in name or "member" in name):
            return True
        for op in (" not in ", " in "):
            left, found, right = text.partition(op)
            if found:
                # ``dist.get_rank() in dist.get_process_group_ranks(group)``:
                # the group's own list of (world) ranks
                head, paren, rest = right.partition("(")
                left = left.strip()
                if paren and head.strip().rsplit(".", 1)[-1] == "get_process_group_ranks" \
                        and rest.rstrip(")").split(",")[0].strip() == group \
                        and names_world_rank(left[4:] if left.startswith("not ") else left):
                    return True
                break
    return False


def _iterated_keys_of(loop) -> Optional[tuple]:
    """``for k in d`` / ``for k in d.keys()`` / ``for k, v in d.items()``:
    (``d``, ``k``); None for any other loop."""
    it, target = loop.iter, loop.target
    if type(it) is ast.Call and not it.args and not it.keywords and type(it.func) is ast.Attribute \
            and it.func.attr in ("keys", "items"):
        if it.func.attr == "items":
            if type(target) is not ast.Tuple or len(target.elts) != 2:
                return None
            target = target.elts[0]
        it = it.func.value
    if type(it) is not ast.Name or type(target) is not ast.Name:
        return None
    return it.id, target.id


def existing_key_stores_of(loop) -> tuple:
    """The ``d[k] = v`` targets (their id()) of a loop over ``d``'s keys whose
    ``k`` is the key the loop drew, and whether every iteration draws what
    ``d`` held on entry to the loop (the body changes ``d`` by those stores
    alone, each under a key already drawn, and only reads it otherwise).
    Such a store replaces the value under a key ``d`` already has: ``d``'s
    own structure (its keys, its length) is what it was, whoever stores (a
    rank test around it decides the value, never the key set).  A store of a new key would end the loop with an error, so there is
    none to miss.  The key must still be the one drawn: neither name is bound
    anew before the store in the body, nor anywhere in an inner loop holding
    the store (whose way back reaches it again without the header)."""
    found = _iterated_keys_of(loop)
    if found is None:
        return (), False
    names = set(found)
    container, key = found
    rebinds = []  # (line, column) of each binding of either name in the body
    stores = []  # (store node, the inner loops holding it)
    # (node, the inner loops holding it); a nested scope may rebind either name (nonlocal): not judged
    stack = [(statement, ()) for statement in loop.body]
    while stack:
        node, loops = stack.pop()
        t = type(node)
        if t in DEFINITIONS:
            return (), False
        if t is ast.Name and type(node.ctx) is not ast.Load and node.id in names:
            rebinds.append((node.lineno, node.col_offset))
        if t is ast.Subscript and type(node.ctx) is ast.Store and type(node.value) is ast.Name \
                and node.value.id == container and type(node.slice) is ast.Name and node.slice.id == key:
            stores.append((node, loops))
        inner = loops + (node,) if t in LOOPS else loops
        stack.extend((child, inner) for child in iter_children(node))
    out = []
    for store, loops in stores:
        at = (store.lineno, store.col_offset)
        if any(place < at for place in rebinds):
            continue
        if any(_inside(place, inner) for inner in loops for place in rebinds):
            continue
        out.append(id(store))
    return tuple(out), len(out) == len(stores) and _only_reads_and_stores(loop.body, container, set(out))


#: methods of a dict that read it: any other method called on it may change what a loop draws
_DICT_READS = frozenset({"get", "keys", "items", "values", "copy"})


def _only_reads_and_stores(body: list, container: str, stores: set) -> bool:
    """Whether ``body`` changes ``container`` only by ``stores``: no other
    store or deletion under a key, no binding anew, no method but a read
    (``d.update(...)``, ``d.pop(k)``).  Handing it to a call is a read, as
    everywhere in the value model."""
    for node in fast_walk(ast.Module(body=body, type_ignores=[])):
        t = type(node)
        if t is ast.Name and node.id == container and type(node.ctx) is not ast.Load:
            return False
        if t is ast.Subscript and type(node.ctx) is not ast.Load and type(node.value) is ast.Name \
                and node.value.id == container and id(node) not in stores:
            return False
        if t is ast.Attribute and type(node.value) is ast.Name and node.value.id == container \
                and node.attr not in _DICT_READS:
            return False
    return True


def _inside(place: tuple, node) -> bool:
    end = (getattr(node, "end_lineno", None) or node.lineno, getattr(node, "end_col_offset", None) or 0)
    return (node.lineno, node.col_offset) <= place <= end


def _admits_none(annotation) -> bool:
    """``Optional[int]``, ``int | None``, ``"Optional[int]"``: an annotation
    that lets the value be None."""
    if annotation is None:
        return False
    if type(annotation) is ast.Constant:
        if annotation.value is None:
            return True
        if type(annotation.value) is not str:
            return False
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return False
    if type(annotation) is ast.BinOp and type(annotation.op) is ast.BitOr:
        return _admits_none(annotation.left) or _admits_none(annotation.right)
    if type(annotation) is ast.Subscript:
        base = annotation.value
        name = base.attr if type(base) is ast.Attribute else base.id if type(base) is ast.Name else None
        if name == "Optional":
            return True
        if name == "Union":
            members = annotation.slice.elts if type(annotation.slice) is ast.Tuple else [annotation.slice]
            return any(_admits_none(member) for member in members)
    return False


def params_that_may_be_none(func) -> frozenset:
    """The parameters of a function that default to None or whose
    annotation admits None."""
    args = getattr(func, "args", None)
    if args is None:
        return frozenset()
    positional = list(args.posonlyargs) + list(args.args)
    out = {arg.arg for arg in positional + list(args.kwonlyargs) if _admits_none(arg.annotation)}
    for arg, default in zip(positional[len(positional) - len(args.defaults):], args.defaults):
        if isinstance(default, ast.Constant) and default.value is None:
            out.add(arg.arg)
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        if isinstance(default, ast.Constant) and default.value is None:
            out.add(arg.arg)
    return frozenset(out)
