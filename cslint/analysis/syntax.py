"""What the analysis reads off the syntax alone: texts of expressions, the
statements and definitions of a module, the calls an expression makes in
evaluation order, early exits, and a test's negation.  (Assignment targets
and parameters: :mod:`.bindings`; tests of a group's size or membership:
:mod:`.grouptests`; a value's own structure: :mod:`.ownstructure`.)"""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import BLOCKS_OF, CHILDREN, COMPREHENSIONS, DEFINITIONS, walked
from .exits import is_process_exit


MAX_TEXT = 120


def short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 3] + "..."


def whole_text(node: ast.AST) -> str:
    """:func:`unparse`'s text of a node, not cut short: what a test of its text alone must read."""
    text = unparse(node)
    return text if len(text) < MAX_TEXT or not text.endswith("...") else " ".join(unparsed(node).split())


def unparsed(node: ast.AST) -> str:
    """``ast.unparse(node)``, from :func:`unparse`'s memo where it made it
    (its short text, where that is all of it): a test's whole text is asked
    by the alternatives of its block after its short text was.  An exotic
    node ``ast.unparse`` fails on fails here alike."""
    known = node.__dict__
    whole = known.get("_cslint_whole")
    if whole is None:
        t = type(node)
        if t is _Name or t is _Attribute:  # (unparse makes a chain's text apart: not read here)
            whole = node._cslint_whole = ast.unparse(node)
        elif known.get("_cslint_text") is not None and "_cslint_unparsable" not in known:
            whole = known["_cslint_text"]  # unparse made it, and nothing was cut or joined
        else:
            whole = ast.unparse(node)
            text = short(whole)
            node._cslint_text = text  # what unparse makes of it
            if text != whole:
                node._cslint_whole = whole
    return whole


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
                whole = ast.unparse(node)
                text = short(whole)
                if text != whole:  # (kept for unparsed, which reads the text alone where it is all)
                    node._cslint_whole = whole
            except Exception:  # pragma: no cover - exotic nodes
                text = type(node).__name__
                node._cslint_unparsable = True
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
        if t in COMPREHENSIONS:
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
        read = CHILDREN[t]  # (iter_children's read written out: no call but the reader's)
        if read is not None:
            for child in read(node):
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
        return unparsed(test.operand)
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _NEGATED_OPS:
        flipped = ast.Compare(left=test.left, ops=[_NEGATED_OPS[type(test.ops[0])]()], comparators=test.comparators)
        return ast.unparse(flipped)
    return ast.unparse(ast.UnaryOp(op=ast.Not(), operand=test))


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
