"""Fast AST traversal.

``ast.walk`` goes through two nested generators per node and visits every
field, including the shared ``Load``/``Store`` context objects, operator
singletons and plain strings.  The analysis walks each function several
times, so on large trees that overhead was the largest single cost after
parsing.  ``walk`` here yields the same nodes in the same (breadth-first)
order, minus context and operator nodes, which no analysis looks at as
nodes (their information is read through the parent's attribute).

Each node type's fields are sorted out once (:func:`child_fields`): a field
that holds one node, a list of nodes, or a list that may also hold None
(``Dict.keys`` for ``**`` entries, ``arguments.kw_defaults``).  A list of
nodes is then taken whole (``extend``) instead of item by item.
"""

from __future__ import annotations

import ast

# Fields that never hold a node worth visiting, whatever the node type.
_SKIPPED_FIELDS = frozenset({
    "ctx", "op", "ops", "id", "attr", "arg", "module", "asname", "type_comment", "kind", "tag",
    "rest", "conversion", "level", "is_async", "kwd_attrs", "lineno", "col_offset",
    "end_lineno", "end_col_offset", "simple",
    "name",  # ``name`` is a plain string on every node type
})
# Node types whose fields hold no nodes at all (or only nodes nobody visits).
_LEAVES = frozenset({
    ast.Constant, ast.Name, ast.Global, ast.Nonlocal, ast.Import, ast.ImportFrom, ast.alias,
    ast.Pass, ast.Break, ast.Continue, ast.MatchStar,
})

# How a field holds its children.
_ONE = 0  # a node, or None
_LIST = 1  # a list of nodes
_SPARSE_LIST = 2  # a list of nodes and Nones
_NODE_OR_VALUE = 3  # a node, or a plain value (``MatchSingleton.value``)
#: list fields that hold None where an item is absent
_SPARSE_FIELDS = frozenset({(ast.Dict, "keys"), (ast.arguments, "kw_defaults")})
#: single fields that may hold a plain value rather than a node
_VALUE_FIELDS = frozenset({(ast.MatchSingleton, "value")})
# Fields of the grammar's sequence (``*``) kind, by name: the same name is a
# sequence on every node type that has it, except in _SINGLE_FIELDS.
_SEQUENCE_NAMES = frozenset({
    "body", "orelse", "finalbody", "handlers", "cases", "decorator_list", "targets", "values", "elts", "keys",
    "generators", "ifs", "args", "keywords", "bases", "items", "names", "comparators", "posonlyargs",
    "kwonlyargs", "kw_defaults", "defaults", "patterns", "kwd_patterns", "type_ignores", "argtypes",
    "type_params",
})
_SINGLE_FIELDS = frozenset({
    (ast.Lambda, "args"), (ast.FunctionDef, "args"), (ast.AsyncFunctionDef, "args"),
    (ast.Lambda, "body"), (ast.IfExp, "body"), (ast.Expression, "body"), (ast.IfExp, "orelse"),
})

_CHILD_FIELDS: dict = {}


def child_fields(node_type: type) -> tuple:
    """``((field name, how it holds children), ...)`` of a node type, in the
    order of its ``_fields``."""
    fields = _CHILD_FIELDS.get(node_type)
    if fields is None:
        if node_type in _LEAVES or not issubclass(node_type, ast.AST):
            fields = ()
        else:
            fields = tuple((name, _how(node_type, name)) for name in node_type._fields
                           if name not in _SKIPPED_FIELDS)
        _CHILD_FIELDS[node_type] = fields
    return fields


def _how(node_type: type, name: str) -> int:
    if (node_type, name) in _SPARSE_FIELDS:
        return _SPARSE_LIST
    if (node_type, name) in _VALUE_FIELDS:
        return _NODE_OR_VALUE
    if name in _SEQUENCE_NAMES and (node_type, name) not in _SINGLE_FIELDS:
        return _LIST
    return _ONE


def _children_by_fields(node: ast.AST) -> list:
    """The direct child nodes of ``node``, field by field; read where a
    node lacks one of its type's fields (a node built by hand)."""
    out: list = []
    for name, how in child_fields(type(node)):
        value = getattr(node, name, None)
        if value is None:
            continue
        if how == _LIST:
            out.extend(value)
        elif how == _ONE:
            out.append(value)
        elif how == _SPARSE_LIST:
            out.extend(item for item in value if item is not None)
        elif isinstance(value, ast.AST):
            out.append(value)
    return out


def _children_reader(node_type: type):
    """A function of one node of ``node_type`` returning its direct child
    nodes as one list display (no call per field), or None for a type
    without child fields.  The walks below call it once per inner node,
    instead of a ``getattr`` and an ``append`` or ``extend`` per field."""
    fields = child_fields(node_type)
    if not fields:
        return None
    parts = []
    for index, (name, how) in enumerate(fields):
        if how == _LIST:
            parts.append(f"*(node.{name} or ())")
        elif how == _ONE:
            parts.append(f"*((v{index},) if (v{index} := node.{name}) is not None else ())")
        elif how == _SPARSE_LIST:
            parts.append(f"*filter(None, node.{name} or ())")  # (a node is never false)
        else:
            parts.append(f"*((v{index},) if isinstance(v{index} := node.{name}, AST) else ())")
    source = (f"def read(node):\n"
              f"    try:\n"
              f"        return [{', '.join(parts)}]\n"
              f"    except AttributeError:\n"
              f"        return by_fields(node)\n")
    space = {"AST": ast.AST, "by_fields": _children_by_fields}
    exec(compile(source, f"<children of {node_type.__name__}>", "exec"), space)
    return space["read"]


class _ChildrenReaders(dict):
    """node type -> :func:`_children_reader`, made on first use.  Indexed
    (``table[type(node)]``), which costs no call where ``dict.get`` does."""

    def __missing__(self, node_type: type):
        reader = self[node_type] = _children_reader(node_type)
        return reader


#: node type -> the function reading its direct child nodes as a list (None: a leaf)
CHILDREN = _ChildrenReaders()


def children_into(node: ast.AST, out: list) -> None:
    """Append the direct child nodes of ``node`` to ``out`` (no generator)."""
    read = CHILDREN[type(node)]
    if read is not None:
        out += read(node)


def iter_children(node: ast.AST):
    """The direct child nodes of ``node`` (like ``ast.iter_child_nodes``,
    without context/operator nodes)."""
    read = CHILDREN[type(node)]
    return iter(read(node) if read is not None else ())


def walk(node: ast.AST):
    """Every node below and including ``node``, breadth first (the order of
    ``ast.walk``)."""
    todo = [node]
    table = CHILDREN
    # the list grows behind the loop: its iterator goes on to the items added
    for current in todo:
        read = table[type(current)]
        if read is not None:
            todo += read(current)
        yield current


def holds_kind(node: ast.AST, kinds) -> bool:
    """Whether :func:`walk` meets a node of one of ``kinds`` (a set or
    tuple of node types) below or at ``node``: its walk written out, with an
    early exit, for the readers that asked ``any(type(sub) in kinds for sub
    in walk(node))`` (no generator resumed per node, twice over)."""
    todo = [node]
    table = CHILDREN
    for current in todo:  # grows behind the loop, as in walk
        t = type(current)
        if t in kinds:
            return True
        read = table[t]
        if read is not None:
            todo += read(current)
    return False


def walked(node: ast.AST) -> list:
    """:func:`walk` as one list, for a reader that takes every node (a loop
    with no exit, a comprehension): no generator resumed per node."""
    todo = [node]
    table = CHILDREN
    for current in todo:  # grows behind the loop, as in walk
        read = table[type(current)]
        if read is not None:
            todo += read(current)
    return todo


#: the fields that hold statements (of a statement, an ``except`` handler or a ``case``)
BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


class _BlockFields(dict):
    """node type -> :func:`block_fields`, made on first use and indexed
    (``BLOCKS_OF[type(node)]``: no call) (most statements have none: an
    assignment, a call, an import, a return)."""

    def __missing__(self, node_type: type) -> tuple:
        fields = getattr(node_type, "_fields", ())
        found = self[node_type] = tuple(name for name in BLOCK_FIELDS if name in fields)
        return found


BLOCKS_OF = _BlockFields()


#: the definitions whose bodies run later, elsewhere (own_nodes leaves them out)
DEFINITIONS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda})
#: the loop statements (a body that runs again, and the one ``break`` and ``continue`` leave)
LOOPS = frozenset({ast.For, ast.AsyncFor, ast.While})
#: the comprehensions (their targets a scope of their own; the element made once per pass of their loops)
COMPREHENSIONS = frozenset({ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp})


def own_nodes(func: ast.AST):
    """The nodes of a function body, not those of nested definitions.
    (Node types are compared by identity, the parser makes no subclasses
    of them; the children are read in place, not through children_into.)"""
    body = func.body
    stack = list(body) if type(body) is list else [body]
    table, definitions = CHILDREN, DEFINITIONS
    while stack:
        node = stack.pop()
        t = type(node)
        if t in definitions:
            continue
        yield node
        read = table[t]
        if read is not None:
            stack += read(node)


def own_returns(func: ast.AST) -> list:
    """The ``return`` statements of a function body, those of nested
    definitions left out: a walk of the statements alone, through their
    blocks (a ``return`` is a statement; what it returns is not walked)."""
    found = []
    todo = list(func.body)
    for stmt in todo:  # grows behind the loop
        kind = type(stmt)
        if kind is ast.Return:
            found.append(stmt)
        elif kind not in DEFINITIONS:
            for name in BLOCKS_OF[kind]:
                todo += getattr(stmt, name)
    return found


def own_yields(func: ast.AST) -> bool:
    """Whether a function body (nested definitions left out) yields: the
    function hands back a generator, whatever its returns write."""
    for node in own_nodes(func):
        if type(node) is ast.Yield or type(node) is ast.YieldFrom:
            return True
    return False


def statement_lists(body: list):
    """Every statement list of a function body (``func.body``), nested
    functions and classes left out.  A handler or a case is walked like a
    statement: the ``handlers`` and ``cases`` lists come out too, and hold
    no statements."""
    stack = [body]
    while stack:
        stmts = stack.pop()
        yield stmts
        for stmt in stmts:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            for field in BLOCKS_OF[type(stmt)]:
                inner = getattr(stmt, field, None)
                if inner:
                    stack.append(inner)


def irrefutable_case(case: ast.match_case) -> bool:
    """Whether a ``case`` matches every subject: no guard and a bare capture or
    wildcard (``case _:``, ``case other:``), so no case after it runs and the
    ``match`` never falls through it."""
    return case.guard is None and type(case.pattern) is ast.MatchAs and case.pattern.pattern is None


def block_fields(node_type: type) -> tuple:
    """The fields of :data:`BLOCK_FIELDS` a node type has, in that order,
    worked out once per type: a statement walk reads those alone instead of
    asking every statement for all five."""
    return BLOCKS_OF[node_type]


def imported_names(node) -> list:
    """The names an ``import`` or ``from ... import`` statement binds, in its
    order: ``import a.b`` binds ``a``, ``import a.b as c`` binds ``c``
    (``from m import *`` yields ``*``)."""
    return [(alias.asname or alias.name).partition(".")[0] for alias in node.names]


def positional_parameters(args: ast.arguments) -> list:
    """The parameters (``ast.arg``) of a definition's ``args`` that a
    call's positional arguments bind, in order: the positional-only ones,
    then the plain ones."""
    return args.posonlyargs + args.args


def defaulted_parameters(args: ast.arguments) -> list:
    """``[(parameter, default), ...]`` of a definition's ``args``: each
    positional parameter that has a default (the last ones,
    :func:`positional_parameters`), then each keyword-only one that has one
    (``kw_defaults`` holds None for one that has none)."""
    positional = args.posonlyargs + args.args
    pairs = list(zip(positional[len(positional) - len(args.defaults):], args.defaults))
    pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
    return pairs


def parameters(args: ast.arguments, starred: bool) -> list:
    """The parameters (``ast.arg``) of a definition's ``args``: the
    positional-only, plain and keyword-only ones in that order, and where
    ``starred`` the ``*args`` and ``**kwargs`` there are after them (every
    name the definition binds).  Without them: the parameters that each
    hold one value a call passes by position or keyword (``*args`` holds a
    tuple of them, ``**kwargs`` a dict), as a reader of their annotations
    or of the keywords a call may pass wants."""
    named = args.posonlyargs + args.args + args.kwonlyargs  # (positional_parameters, written out: asked often)
    if starred:
        # (written out, no comprehension: asked for every function, and for most of them several times)
        if args.vararg is not None:
            named.append(args.vararg)
        if args.kwarg is not None:
            named.append(args.kwarg)
    return named


def param_names(func, starred: bool = True) -> frozenset:
    """The names of :func:`parameters` of a function definition or lambda
    (``*args`` and ``**kwargs`` by their bare names, ``starred``); empty for
    the module body."""
    try:
        args = func.args
    except AttributeError:  # (the module body, a class)
        return frozenset()
    return frozenset([a.arg for a in parameters(args, starred)])


def plain_bindings(func: ast.AST, accept) -> dict:
    """``{name: [statements]}``: the local names of ``func`` every binding of
    which is a plain ``name = value`` statement with ``accept(value)`` true,
    each with those statements (in walk order).  A name is left out where
    anything else binds it: a parameter, another assignment, a loop or
    ``with`` target, a walrus, ``except ... as``, an import, a definition,
    ``global`` or ``nonlocal`` (a nested definition's ``nonlocal`` too: its
    stores are this function's).  Nested definitions are another scope."""
    spoilt = set(param_names(func))
    stores: dict = {}
    found: dict = {}
    stack = list(func.body)
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind in DEFINITIONS:
            if kind is not ast.Lambda:
                spoilt.add(node.name)
            spoilt.update(name for inner in walk(node) if type(inner) is ast.Nonlocal for name in inner.names)
            continue
        if kind is ast.Name:
            if type(node.ctx) is not ast.Load:
                stores[node.id] = stores.get(node.id, 0) + 1
            continue
        if kind is ast.ExceptHandler and node.name:
            spoilt.add(node.name)
        elif kind is ast.Global or kind is ast.Nonlocal:
            spoilt.update(node.names)
        elif kind is ast.Import or kind is ast.ImportFrom:
            spoilt.update(imported_names(node))
        elif kind is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name and accept(node.value):
            found.setdefault(node.targets[0].id, []).append(node)
        children_into(node, stack)
    return {name: statements for name, statements in found.items()
            if name not in spoilt and stores.get(name) == len(statements)}


_FUNCTION_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def scoped_walk(func: ast.AST, names: frozenset):
    """``(node, visible)`` for every node of ``func``'s body, nested
    definitions included, ``visible`` the ``names`` that mean ``func``'s own
    names there: inside a nested function or lambda that binds one itself (a
    parameter, a store of its own body, a ``global``) without declaring it
    ``nonlocal``, that name is the nested one's.  A nested definition's
    decorators, defaults and annotations are read where it stands.  A class
    body and a comprehension's target count as mentions (a reader of
    ``visible`` finds more of them, never fewer)."""
    stack = [(node, names) for node in reversed(func.body)]
    while stack:
        node, visible = stack.pop()
        yield node, visible
        kind = type(node)
        if kind in _FUNCTION_SCOPES and visible:
            inner = visible - _binds_itself(node)
            parts = [(node.args, visible)]
            if kind is ast.Lambda:
                parts.append((node.body, inner))
            else:
                parts += [(part, visible) for part in (*node.decorator_list, node.returns) if part is not None]
                parts += [(statement, inner) for statement in node.body]
            stack += reversed(parts)
            continue
        read = CHILDREN[kind]
        if read is not None:
            stack += [(child, visible) for child in reversed(read(node))]


def _binds_itself(func: ast.AST) -> frozenset:
    """The names a function or lambda binds in its own scope: its parameters,
    the names its own body stores (a comprehension's target aside: that one
    is the comprehension's) and those it declares ``global``; not those it
    declares ``nonlocal``."""
    bound = set(param_names(func))
    targets: set = set()  # id() of the names a comprehension's target binds
    shared: set = set()
    for node in own_nodes(func):
        kind = type(node)
        if kind is ast.comprehension:
            targets.update(id(inner) for inner in walk(node.target))
        elif kind is ast.Name and type(node.ctx) is not ast.Load and id(node) not in targets:
            bound.add(node.id)
        elif kind is ast.Global:
            bound.update(node.names)
        elif kind is ast.Nonlocal:
            shared.update(node.names)
    return frozenset(bound - shared)
