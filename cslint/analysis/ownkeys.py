"""A process's own memo table keyed by its own identity (issue 14, own id in a lookup key).

A module-level table that one function alone reads and fills, always under
one key built there, holds only keys that carry this process's own rank or
device wherever that key says so::

    _cache: dict = {}

    def workspace(size, group):
        key = (torch.cuda.current_device(), size, id(group))
        if key not in _cache:                      # a miss on every rank alike
            _cache[key] = Workspace(size, group)   # gathers over ``group``
        return _cache[key]

Each process has a table of its own.  Where an element of the key is this
process's identity read right there (``dist.get_rank()``,
``torch.cuda.current_device()``: a rank's or a device's identity, the same
on every call in one process), every key the process ever looks up or stores
holds that same value at that position, so whether a key is there follows
the other elements alone: the identity tells the processes apart, never two
keys of one process.  Such an element is *held* (:func:`~.atoms.hold`) in
the key: it decides no test of the key's presence, while the other elements
and the tests around the key's binding still do.

Only where the table cannot hold a key of another making, nor miss one on
some ranks only:

* the table is a name bound once, at the module's top level, to a new empty
  mapping (``{}`` or ``dict()``, annotated or not: a display with entries
  holds keys of its own making, a ``defaultdict`` stores a key on a read),
  never bound again anywhere in the module (no ``global`` declaration,
  parameter, local of that name or other binding), and mentioned by one
  function only, with one local name as the key: one test of the key's
  absence (``if key not in table:``, or ``value = table.get(key)`` followed
  by ``if value is None:``), stores ``table[key] = ...`` each a statement of
  that test's own arm with nothing before it there that leaves the arm
  (``return``, ``raise``, ``break``, ``continue``, ``yield``, ``await``), no
  ``try`` (nor ``with contextlib.suppress(...)``) of the function round the
  test, where a handler could swallow a failure before the store and leave
  this rank alone without the key, and reads ``table[key]`` (no ``del``,
  ``pop``, iteration, ``len``, ``update``, nor the table handed on).  So
  every process stores exactly the keys it missed, and the tests around the
  absence test decide the lookup and the store alike: a rank-local one is
  read there as before.  A failure inside the arm is taken to leave the
  function (as any unhandled failure is read);
* that key local is bound once in the function, to a tuple display, is not
  a parameter, is declared neither ``global`` nor ``nonlocal``, is mentioned
  in no nested definition and is read nowhere but as the table's key (so the
  held identity reaches no other test);
* an element is held only where it is a call without arguments whose whole
  value is one identity source read by the element's own text
  (``dist.get_rank()``, ``torch.cuda.current_device()``): the same on every
  call in one process.  An element that mixes the rank with something else,
  ``(rank + i) // 2`` or a name bound to it, may map two keys of one process
  together differently on different ranks; a rank within a group handed in,
  ``dist.get_rank(group)``, or a field of the object, ``self.rank``, differs
  between two calls of one process over two groups or objects, which may
  pair up differently on different ranks; a rank handed in as a parameter
  may be another process's.  Those are read as before.

Another module writing the table (``mod._cache[k] = v``) is not seen, as no
write of a module global from a function is (:mod:`~.memofills`).
"""

from __future__ import annotations

import ast

from .astwalk import BLOCKS_OF, DEFINITIONS, imported_names, iter_children, parameters, walked
from .atoms import IDENTITY_KINDS, hold
from .syntax import dotted, unparse

#: the methods of a table that take the key first and read or write that key alone
_KEYED_METHODS = frozenset({"get", "pop", "setdefault"})
#: the memo key under which a module's tables are kept on ``ctx.container_fields`` (a tuple: no class key is one)
_TABLES = ("own-keyed tables",)
_KEYS = "own-keyed key locals"


def _module_tables(ctx) -> frozenset:
    """The names bound once at the module's top level to a new mapping."""
    memo = ctx.container_fields
    found = memo.get(_TABLES)
    if found is not None:
        return found
    bound: dict = {}
    for stmt in ctx.tree.body:
        t = type(stmt)
        if t is ast.Assign and len(stmt.targets) == 1 and type(stmt.targets[0]) is ast.Name:
            name, value = stmt.targets[0].id, stmt.value
        elif t is ast.AnnAssign and type(stmt.target) is ast.Name and stmt.value is not None:
            name, value = stmt.target.id, stmt.value
        else:
            continue
        bound[name] = None if name in bound or not _new_empty_mapping(value) else stmt
    found = memo[_TABLES] = frozenset(name for name, stmt in bound.items() if stmt is not None)
    return found


def _new_empty_mapping(value) -> bool:
    """``{}`` or ``dict()``: a display with entries holds keys of its own
    making (``{(0, size): None}``), and a ``defaultdict`` stores a key on
    every read of it."""
    if type(value) is ast.Dict:
        return not value.keys
    return type(value) is ast.Call and not value.args and not value.keywords \
        and type(value.func) is ast.Name and value.func.id == "dict"


def _key_of(node: ast.Name, parent, grandparent):
    """The name of the key local of a mention of a table (``node``), or None
    where the mention is not one of the keyed reads and writes above."""
    t = type(parent)
    if t is ast.Subscript and parent.value is node:
        return parent.slice.id if type(parent.slice) is ast.Name else None
    if t is ast.Compare and len(parent.ops) == 1 and type(parent.ops[0]) in (ast.In, ast.NotIn) \
            and parent.comparators[0] is node:
        return parent.left.id if type(parent.left) is ast.Name else None
    if t is ast.Attribute and parent.value is node and parent.attr in _KEYED_METHODS \
            and type(grandparent) is ast.Call and grandparent.func is parent and grandparent.args \
            and not grandparent.keywords and type(grandparent.args[0]) is ast.Name \
            and not any(type(arg) is ast.Starred for arg in grandparent.args):
        return grandparent.args[0].id
    return None


def _with_parents(root, skip_definitions: bool):
    """(node, parent, grandparent) below ``root`` (its own body where
    ``skip_definitions``: not the bodies of nested definitions)."""
    stack = [(child, root, None) for child in iter_children(root)]
    while stack:
        node, parent, grandparent = stack.pop()
        yield node, parent, grandparent
        if skip_definitions and type(node) in DEFINITIONS:
            continue
        stack.extend((child, node, parent) for child in iter_children(node))


def _table_users(ctx, table: str):
    """The one definition every mention of ``table`` outside its binding lies
    directly in, or None (a mention at the top level, in a class body or in
    two definitions; any other binding of the name)."""
    memo = ctx.container_fields
    key = (_TABLES, table)
    if key in memo:
        return memo[key]
    user = None
    ok = True
    binding = 0
    for node, parent, _grand in _with_parents(ctx.tree, False):
        t = type(node)
        if t is ast.Global or t is ast.Nonlocal:
            if table in node.names:
                ok = False
        elif t is ast.arg:
            if node.arg == table:
                ok = False
        elif t is ast.Import or t is ast.ImportFrom:
            if table in imported_names(node):
                ok = False
        elif t in DEFINITIONS or t is ast.ExceptHandler or t is ast.MatchAs or t is ast.MatchStar:
            if getattr(node, "name", None) == table:
                ok = False
        elif t is ast.Name and node.id == table:
            if type(node.ctx) is not ast.Load:
                binding += 1
                continue
            owner = _owner(ctx, node)
            if owner is None or user is not None and owner is not user:
                ok = False
            user = owner
        if not ok:
            break
    found = memo[key] = user if ok and binding == 1 else None
    return found


def _owner(ctx, node):
    """The innermost function definition holding ``node`` (None at the top
    level or directly in a class body)."""
    owners = ctx.container_fields.get(_OWNERS)
    if owners is None:
        owners = ctx.container_fields[_OWNERS] = _owners(ctx.tree)
    return owners.get(id(node))


_OWNERS = ("owners of names",)


def _owners(tree) -> dict:
    """id(Name node) -> the innermost function definition holding it."""
    out: dict = {}
    stack = [(child, None) for child in iter_children(tree)]
    while stack:
        node, owner = stack.pop()
        t = type(node)
        if t is ast.Name:
            if owner is not None:
                out[id(node)] = owner
            continue
        if t is ast.ClassDef:
            inner = None
        elif t in DEFINITIONS:
            inner = node
        else:
            inner = owner
        stack.extend((child, inner) for child in iter_children(node))
    return out


def identity_key_locals(ctx, func) -> frozenset:
    """The key locals of ``func`` (see the module) of tables only it keys so."""
    memo = ctx.container_fields
    key = (_KEYS, id(func))
    found = memo.get(key)
    if found is not None:
        return found
    found = memo[key] = _key_locals(ctx, func)
    return found


def _key_locals(ctx, func) -> frozenset:
    tables = _module_tables(ctx)
    if not tables or type(func) not in (ast.FunctionDef, ast.AsyncFunctionDef):
        return frozenset()
    mentions: dict = {}  # table -> [(key local or None, parent, grandparent)]
    for node, parent, grandparent in _with_parents(func, True):
        if type(node) is ast.Name and node.id in tables:
            mentions.setdefault(node.id, []).append((_key_of(node, parent, grandparent), parent, grandparent))
    if not mentions:
        return frozenset()
    places = _statement_places(func)
    params = {arg.arg for arg in parameters(func.args, True)}
    keyed: dict = {}  # key local -> how many reads of it key a table it alone keys
    dropped: set = set()
    for table, found in mentions.items():
        names = {name for name, _p, _g in found}
        if len(names) != 1 or None in names or _table_users(ctx, table) is not func \
                or not _filled_on_miss(table, found, places):
            dropped |= names
            continue
        name = names.pop()
        keyed[name] = keyed.get(name, 0) + len(found)
    out = set()
    for name, key_reads in keyed.items():
        if name in dropped or name in params:
            continue
        bindings = reads = 0
        ok = True
        for node, _parent, _grand in _with_parents(func, True):
            t = type(node)
            if t is ast.Name and node.id == name:
                if type(node.ctx) is ast.Load:
                    reads += 1
                else:
                    bindings += 1
            elif (t is ast.Global or t is ast.Nonlocal) and name in node.names:
                ok = False
            elif t in DEFINITIONS and any(type(inner) is ast.Name and inner.id == name for inner in walked(node)):
                ok = False
            elif t is ast.Assign and any(type(target) is ast.Name and target.id == name for target in node.targets):
                if len(node.targets) != 1 or type(node.value) is not ast.Tuple \
                        or any(type(e) is ast.Starred for e in node.value.elts):
                    ok = False
        if ok and bindings == 1 and reads == key_reads:
            out.add(name)
    return frozenset(out)


def _statement_places(func) -> dict:
    """id(statement) -> (its block, its index there, whether a ``try`` of
    ``func`` holds it), for the statements of ``func``'s own body."""
    places: dict = {}
    stack = [(func.body, False)]
    while stack:
        block, in_try = stack.pop()
        for index, stmt in enumerate(block):
            places[id(stmt)] = (block, index, in_try)
            t = type(stmt)
            if t in DEFINITIONS:
                continue
            inner_try = in_try or t is ast.Try or t is getattr(ast, "TryStar", ast.Try) or _suppresses(stmt)
            for field in BLOCKS_OF[t]:
                inner = getattr(stmt, field, None)
                if inner and field != "handlers":
                    stack.append((inner, inner_try))
                elif inner:
                    stack.extend((handler.body, True) for handler in inner)
    return places


def _suppresses(stmt) -> bool:
    """Whether a ``with`` may swallow what its body raises, as a ``try``
    does: ``contextlib.suppress(...)`` (other context managers let a failure
    through)."""
    if type(stmt) is not ast.With and type(stmt) is not ast.AsyncWith:
        return False
    for item in stmt.items:
        call = item.context_expr
        text = dotted(call.func) if type(call) is ast.Call else None
        if text is not None and text.rpartition(".")[2] == "suppress":
            return True
    return False


def _filled_on_miss(table: str, found: list, places: dict) -> bool:
    """Whether the table's mentions are one test of the key's absence and
    stores made on every path through that test's true arm: ``if key not in
    table:``, or ``value = table.get(key)`` and next ``if value is None:``,
    every ``table[key] = ...`` a statement of that arm's own block with
    nothing before it there that leaves it, and no ``try`` round the test (a
    handler that swallows a failure before the store would leave this rank
    without the key); other mentions only read ``table[key]``."""
    absent = None
    stores = []
    for _name, parent, grandparent in found:
        t = type(parent)
        if t is ast.Compare:
            if absent is not None or type(parent.ops[0]) is not ast.NotIn:
                return False
            absent = _if_testing(parent, places)
            if absent is None:
                return False
        elif t is ast.Attribute:
            if absent is not None or parent.attr != "get":
                return False
            absent = _if_after_get(grandparent, places)
            if absent is None:
                return False
        elif type(parent.ctx) is ast.Store:
            stores.append(parent)
        elif type(parent.ctx) is not ast.Load:
            return False
    if absent is None or absent[2]:
        return False
    body = absent[0].body
    for store in stores:
        statement = next((s for s in body if type(s) is ast.Assign and s.targets == [store]), None)
        if statement is None:
            return False
        for earlier in body[:body.index(statement)]:
            if any(type(node) in _LEAVES for node in walked(earlier)):
                return False
    return True


#: what leaves a block before a later statement of it runs (``break`` and ``continue`` of an inner loop too)
_LEAVES = frozenset({ast.Return, ast.Raise, ast.Break, ast.Continue, ast.Yield, ast.YieldFrom, ast.Await})


def _if_testing(compare: ast.Compare, places: dict):
    """(the ``if`` whose whole test is ``compare``, -, in a ``try``), or None."""
    for stmt_id, (block, index, in_try) in places.items():
        stmt = block[index]
        if type(stmt) is ast.If and stmt.test is compare:
            return stmt, None, in_try
    return None


def _if_after_get(call, places: dict):
    """(the ``if value is None:`` right after ``value = table.get(key)``,
    -, in a ``try``), or None."""
    for stmt_id, (block, index, in_try) in places.items():
        stmt = block[index]
        if type(stmt) is ast.Assign and stmt.value is call and len(stmt.targets) == 1 \
                and type(stmt.targets[0]) is ast.Name and index + 1 < len(block):
            following = block[index + 1]
            test = following.test if type(following) is ast.If else None
            if type(test) is ast.Compare and len(test.ops) == 1 and type(test.ops[0]) is ast.Is \
                    and type(test.left) is ast.Name and test.left.id == stmt.targets[0].id \
                    and type(test.comparators[0]) is ast.Constant and test.comparators[0].value is None:
                return following, None, in_try
            return None
    return None


def held_key(evaluator, value: ast.Tuple, env: dict) -> frozenset:
    """The atoms of a key local's tuple, each element that is one identity
    source read by its own text held (see the module)."""
    atoms = frozenset()
    for element in value.elts:
        part = evaluator.eval(element, env)
        if type(element) is ast.Call and not element.args and not element.keywords and part \
                and all(atom.tag == "S" and atom.kind in IDENTITY_KINDS for atom in part) \
                and {atom.text for atom in part} == {unparse(element)}:
            part = hold(part)
        atoms |= part
    return atoms
