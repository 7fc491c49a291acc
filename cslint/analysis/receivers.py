"""Receiver types: what kind of object a method call is made on.

``sock.connect(addr)`` on a socket must never reach a project class's
``connect()`` just because that is the only method of the name the analysis
has seen.  Before a call is resolved by its method name alone, the receiver's
type is read off the function's own code: the assignments to a local name
(``x = Foo(...)``, ``x = Foo.__new__(Foo)``, ``sock = ctx.socket(...)``,
``with socket.socket() as s``),
parameter and return annotations (an entry of a parameter annotated as a
mapping or a list of one type, ``shards[k]`` or ``shards.get(k)`` of
``shards: Dict[Id, Shard]``, is a ``Shard``), and fields (``self.x``).  The result is a
tuple of *type terms*, plain tuples the whole-tree pass resolves once every
file is known (:meth:`cslint.analysis.program.Program.receiver_types`):

===============================  =============================================
term                             the receiver is
===============================  =============================================
``("class", key)``               an instance of a class of this file
``("named", dotted)``            an instance of the class a canonical dotted
                                 name names, or what calling that name returns
                                 (a constructor, a factory function)
``("returns", ref)``             what the function ``ref`` returns (its return
                                 annotation)
``("method", terms, name)``      what method ``name`` returns on a receiver of
                                 type ``terms``
``("attr", terms, name)``        attribute ``name`` of a receiver of type
                                 ``terms``
``("field", class_key, attr)``   what the field ``self.attr`` holds
``("library", module)``          an object of a standard-library module
===============================  =============================================

Alternatives are kept side by side (``x = a if c else Foo()``); one the
function does not show (a parameter without annotation, an item of a
container) adds nothing, so the known ones decide, as a type checker that
infers from assignments would.  A receiver every term of which is a
standard-library object is never a project class, which is decided here
already; third-party modules are known only once the tree is (a module the
tree does not hold).
"""

from __future__ import annotations

import ast
import sys
import weakref
from typing import Optional

from .astwalk import CHILDREN, DEFINITIONS, imported_names, param_names, parameters
from .bindings import target_names
from .callrefs import ANY_ARGUMENTS, func_ref, is_classmethod, method_ref, super_ref
from .scope import canonical_text
from .syntax import dotted

#: Alternatives kept per receiver, and nesting of method/attribute terms.
MAX_TERMS = 4
MAX_DEPTH = 4

#: Top-level modules of the standard library.
STDLIB_MODULES = frozenset(getattr(sys, "stdlib_module_names", ())) | {"builtins"}

#: Builtins that make a standard object (never a project class).
BUILTIN_CONSTRUCTORS = frozenset({
    "dict", "list", "set", "frozenset", "tuple", "str", "bytes", "bytearray", "int", "float", "bool",
    "open", "iter", "memoryview", "range", "enumerate", "zip", "map", "filter", "reversed", "object",
})

#: Methods of library objects that hand back what was put into them: the
#: result may be a project object (a queue's ``get``, a future's ``result``;
#: ``send``/``recv``: a connection's or a pipe's receive, a generator's
#: ``send``; ``recv_pyobj``: a ZeroMQ socket's).  Read by the receiver typing
#: (``receivers``, ``resolution``) whatever presets are loaded: it says how a
#: library object's result is typed, not which calls communicate, so it is
#: not a pack's knowledge.
CONTAINER_ACCESSORS = frozenset({
    "get", "pop", "popleft", "popitem", "get_nowait", "result", "setdefault", "__getitem__", "__next__",
    "copy", "values", "items", "keys", "send", "recv", "recv_pyobj", "wait", "join",
})


#: the nodes a binding of a local name is looked for in (not inside a call's
#: keywords, a comprehension or a default value)
_BINDING_PARTS = (ast.stmt, ast.withitem, ast.expr, ast.excepthandler, ast.match_case)
#: the same without expressions, for a body with no ``name := value``: the
#: statements alone bind its names, and most of a body's nodes are expressions
_STATEMENT_PARTS = (ast.stmt, ast.withitem, ast.excepthandler, ast.match_case)


class _IsPart(dict):
    """node type -> whether it is one of ``parts`` (``isinstance`` without a
    call per node: indexed, and worked out on a type's first use)."""

    def __init__(self, parts: tuple):
        super().__init__()
        self.parts = parts

    def __missing__(self, node_type: type) -> bool:
        found = self[node_type] = issubclass(node_type, self.parts)
        return found


_IS_BINDING_PART, _IS_STATEMENT_PART = _IsPart(_BINDING_PARTS), _IsPart(_STATEMENT_PARTS)


def library_term(module: str) -> tuple:
    return ("library", module)


def is_library(terms: tuple) -> bool:
    """Every alternative is a standard-library object."""
    return bool(terms) and all(term[0] == "library" for term in terms)


def _union(groups) -> tuple:
    out: list = []
    for group in groups:
        for term in group:
            if term not in out:
                out.append(term)
                if len(out) >= MAX_TERMS:
                    return tuple(out)
    return tuple(out)


class ReceiverTypes:
    """Type terms of the expressions of one function (see the module
    docstring).  Built on first use: most calls are resolved without it."""

    def __init__(self, info):
        # a proxy: the function info keeps this object, and a reference
        # cycle would outlive the file (the run keeps the cyclic collector off)
        self.info = weakref.proxy(info)
        self.ctx = info.ctx
        self._assignments: Optional[dict] = None
        self._imported: frozenset = frozenset()
        self._calls: Optional[dict] = None  # id(receiver) -> the call of a method on it, with arguments
        self._param_annotations: Optional[dict] = None
        self._busy: set = set()
        self._memo: dict = {}

    def copy(self) -> "ReceiverTypes":
        """A copy whose answers from now on are kept apart from this one's."""
        other = ReceiverTypes.__new__(ReceiverTypes)
        other.__dict__.update(self.__dict__)
        other._busy, other._memo = set(self._busy), dict(self._memo)
        return other

    # -- what the function binds ---------------------------------------------------------
    def _index(self) -> None:
        """Local name -> the expressions assigned to it (annotations included,
        as ``("annotation", node)``); one walk of the body."""
        assignments: dict = {}
        imported: dict = {}  # local name -> the import statements of the body binding it
        func = self.info.func
        body = func.body if isinstance(getattr(func, "body", None), list) else []
        stack = list(body)
        is_part = _IS_BINDING_PART if self.info.binds_in_expressions() else _IS_STATEMENT_PART
        while stack:
            node = stack.pop()
            t = type(node)
            if t in DEFINITIONS:
                continue
            if t is ast.Assign:
                for target in node.targets:
                    if type(target) is ast.Name:
                        assignments.setdefault(target.id, []).append(node.value)
                    elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(node.value, (ast.Tuple, ast.List)) \
                            and len(target.elts) == len(node.value.elts):
                        for sub, value in zip(target.elts, node.value.elts):
                            if type(sub) is ast.Name:
                                assignments.setdefault(sub.id, []).append(value)
            elif t is ast.AnnAssign:
                if type(node.target) is ast.Name:
                    entry = assignments.setdefault(node.target.id, [])
                    entry.append(("annotation", node.annotation))
                    if node.value is not None:
                        entry.append(node.value)
            elif t is ast.withitem:
                if type(node.optional_vars) is ast.Name:
                    assignments.setdefault(node.optional_vars.id, []).append(node.context_expr)
            elif t is ast.NamedExpr:
                if type(node.target) is ast.Name:
                    assignments.setdefault(node.target.id, []).append(node.value)
            elif t is ast.Import or t is ast.ImportFrom:
                for name in imported_names(node):
                    if name != "*":
                        imported.setdefault(name, []).append(node)
            read = CHILDREN[t]
            if read is not None:
                stack += [child for child in read(node) if is_part[type(child)]]
        self._assignments = assignments
        # a name the body binds by import statements alone names what the
        # module's imports name (``import socket as socket_mod`` in a function)
        self._imported = frozenset(name for name in imported if name not in assignments)

    def _parameter_annotations(self) -> dict:
        """Parameter name -> its annotation node; read apart from the body's
        walk (:meth:`_index`), which a declared type alone does not need."""
        annotations = self._param_annotations
        if annotations is None:
            annotations = self._param_annotations = {}
            args = getattr(self.info.func, "args", None)
            if args is not None:
                for a in parameters(args, starred=False):
                    if a.annotation is not None:
                        annotations[a.arg] = a.annotation
        return annotations

    def declared_terms(self, name: str) -> tuple:
        """The type terms a parameter's annotation declares
        (``receiver: Optional[Receiver]``: a ``Receiver`` of this file or
        imported); () for a name that is no annotated parameter, or whose
        annotation names nothing the file can tell."""
        annotation = self._parameter_annotations().get(name)
        return self.annotation_terms(annotation) if annotation is not None else ()

    # -- terms ---------------------------------------------------------------------------
    def terms(self, expr: ast.AST, depth: int = 0) -> tuple:
        """The type terms of ``expr`` (empty: nothing known)."""
        if depth > MAX_DEPTH:
            return ()
        key = id(expr)
        found = self._memo.get(key)
        if found is not None and found[0] is expr:
            return found[1]
        if key in self._busy:
            return ()
        self._busy.add(key)
        try:
            result = self._terms(expr, depth)
        finally:
            self._busy.discard(key)
        self._memo[key] = (expr, result)
        return result

    def _terms(self, expr, depth: int) -> tuple:
        info = self.info
        t = type(expr)
        if t is ast.Name:
            return self._name_terms(expr.id, depth)
        if t is ast.Call:
            return self._call_terms(expr, depth)
        if t is ast.Attribute:
            attr = info.self_attr(expr)
            if attr is not None:
                return (("field", info.class_key, attr),)
            text = dotted(expr)
            if text and "()" not in text and text.split(".")[0] in self.ctx.imports:
                return self._named(canonical_text(text, self.ctx.imports))
            inner = self.terms(expr.value, depth + 1)
            if is_library(inner):
                return inner
            return (("attr", inner, expr.attr),) if inner else ()
        if t is ast.Await:
            return self.terms(expr.value, depth + 1)
        if t is ast.NamedExpr:
            return self.terms(expr.value, depth + 1)
        if t is ast.IfExp:
            return _union((self.terms(expr.body, depth + 1), self.terms(expr.orelse, depth + 1)))
        if t is ast.BoolOp:
            return _union(self.terms(value, depth + 1) for value in expr.values)
        if t in (ast.JoinedStr, ast.Dict, ast.List, ast.Set, ast.Tuple, ast.ListComp, ast.DictComp,
                 ast.SetComp, ast.GeneratorExp):
            return (library_term("builtins"),)
        if t is ast.Constant:
            return (library_term("builtins"),) if expr.value is not None else ()
        if t is ast.Subscript and type(expr.slice) is not ast.Slice and type(expr.value) is ast.Name:
            return self._element_terms(expr.value.id)
        return ()

    def _element_terms(self, name: str) -> tuple:
        """The type of one entry of ``name`` (``shards[k]``), a parameter
        annotated as a mapping or a list of one type (``Dict[Id, Shard]``,
        ``List[Shard]``): what the annotation says its entries are."""
        if self._assignments is None:
            self._index()
        annotation = self._parameter_annotations().get(name)
        if annotation is None or name in self._assignments:
            return ()
        return element_annotation_terms(annotation, self.ctx)

    def _name_terms(self, name: str, depth: int) -> tuple:
        info = self.info
        if self._assignments is None:
            self._index()
        if name == info.self_name and info.class_key:
            return (("class", info.class_key),)
        annotation = self._parameter_annotations().get(name)
        if annotation is not None:
            return self.annotation_terms(annotation)
        values = self._assignments.get(name)
        if values:
            groups = []
            for value in values:
                if type(value) is tuple:  # ("annotation", node): the declared type decides
                    declared = self.annotation_terms(value[1])
                    if declared:
                        return declared
                    continue
                groups.append(self.terms(value, depth + 1))
            return _union(groups)
        return ()

    def _named(self, canonical: str) -> tuple:
        top = canonical.split(".", 1)[0]
        if top in STDLIB_MODULES and top != self.ctx.module.split(".", 1)[0]:
            return (library_term(top),)
        return (("named", canonical),)

    def _call_terms(self, call: ast.Call, depth: int) -> tuple:
        info = self.info
        ctx = self.ctx
        func = call.func
        if type(func) is ast.Name:
            name = func.id
            if name == info.self_name and info.class_key and is_classmethod(info.func):
                return (("class", info.class_key),)  # ``cls(...)``: the class's own constructor
            if name in ctx.imports and name not in info.local_defs:
                return self._named(ctx.imports[name])  # imported here or at module level
            if name in info.local_names and name not in info.local_defs:
                return ()  # a callable held in a variable
            if name in info.local_defs:
                return (("returns", func_ref(ctx.module, info.local_defs[name])),)
            if name in ctx.module_classes:
                return (("class", f"{ctx.module}:{name}"),)
            if name in ctx.module_functions:
                return (("returns", func_ref(ctx.module, name)),)
            if name in ctx.imports:
                return self._named(ctx.imports[name])
            if name in BUILTIN_CONSTRUCTORS:
                return (library_term("builtins"),)
            return ()
        if type(func) is not ast.Attribute:
            return ()
        if func.attr == "__new__" and call.args:
            # ``Queue.__new__(Queue)``, ``object.__new__(cls)``: an instance of
            # the class it is handed (a constructor that skips ``__init__``)
            return self._class_terms(call.args[0])
        value = func.value
        if type(value) is ast.Name and value.id == info.self_name and info.class_key:
            return (("returns", method_ref(info.class_key, func.attr)),)
        if func.attr in _ENTRY_LOOKUPS and type(value) is ast.Name and call.args and len(call.args) <= 2:
            found = self._element_terms(value.id)  # ``shards.get(k)``: an entry, or the default
            if found:
                return _union((found, self.terms(call.args[1], depth + 1))) if len(call.args) == 2 else found
        if type(value) is ast.Call and type(value.func) is ast.Name and value.func.id == "super" and info.class_key:
            return (("returns", super_ref(info.class_key, func.attr)),)
        text = dotted(value)
        if text and "()" not in text:
            head = text.split(".")[0]
            if head in ctx.imports and (head not in info.local_names or self._imported_here(head)):
                return self._named(canonical_text(text, ctx.imports) + "." + func.attr)
            if head in ctx.module_classes and "." not in text:
                return (("named", f"{ctx.module}.{text}.{func.attr}"),)
        inner = self.terms(value, depth + 1)
        if not inner:
            return ()
        if is_library(inner) and func.attr not in CONTAINER_ACCESSORS:
            return inner
        return (("method", inner, func.attr),)

    def call_shape(self, receiver: ast.AST) -> tuple:
        """What the call of a method on ``receiver`` passes
        (:data:`~cslint.analysis.callrefs.ANY_ARGUMENTS`): how many positional
        arguments (-1 where it unpacks some) and which keywords (None where
        it spreads a mapping)."""
        calls = self._calls
        if calls is None:
            info = self.info
            info.ensure_scanned()  # (the scan notes the calls with arguments)
            calls = self._calls = {id(call.func.value): call for found in info.calls_by_statement.values()
                                   for call in found if type(call.func) is ast.Attribute}
        call = calls.get(id(receiver))
        if call is None or call.func.value is not receiver:
            # a call with no arguments, or one the scan does not note (in a lambda): either may bind
            return ANY_ARGUMENTS
        positional = -1 if any(type(arg) is ast.Starred for arg in call.args) else len(call.args)
        names = [kw.arg for kw in call.keywords]
        return positional, (None if None in names else tuple(sorted(names)))

    def _imported_here(self, name: str) -> bool:
        """Whether the body binds ``name`` by import statements alone."""
        if self._assignments is None:
            self._index()
        return name in self._imported

    def _class_terms(self, expr) -> tuple:
        """An instance of the class ``expr`` names: a class of this file or
        of an import, or ``cls`` in a classmethod; () for anything else."""
        info = self.info
        if type(expr) is ast.Name and expr.id == info.self_name and info.class_key and is_classmethod(info.func):
            return (("class", info.class_key),)
        if type(expr) is ast.Name and expr.id in info.local_names:
            return ()
        text = dotted(expr)
        if not text or "()" in text:
            return ()
        return _dotted_name_terms(text, self.ctx)

    def annotation_terms(self, node: ast.AST) -> tuple:
        """The classes an annotation names (``Foo``, ``Optional[Foo]``,
        ``Foo | None``, ``"Foo"``); containers and unknown forms give none."""
        return annotation_terms(node, self.ctx)


def class_attribute_terms(value: ast.AST, ctx) -> tuple:
    """Type terms of a class-body assignment's value (``_ctx = zmq.Context()``):
    a constructor or factory called through an import or a class of the file."""
    if type(value) is not ast.Call:
        return ()
    text = dotted(value.func)
    if not text or "()" in text:
        return ()
    return _dotted_name_terms(text, ctx)


def _dotted_name_terms(text: str, ctx) -> tuple:
    """Type terms of a dotted name: a class of this file, or what an import
    names (a standard-library module is a library term); () otherwise."""
    head = text.split(".")[0]
    if head in ctx.module_classes and "." not in text:
        return (("class", f"{ctx.module}:{text}"),)
    if head in ctx.imports:
        canonical = canonical_text(text, ctx.imports)
        top = canonical.split(".", 1)[0]
        if top in STDLIB_MODULES and top != ctx.module.split(".", 1)[0]:
            return (library_term(top),)
        return (("named", canonical),)
    return ()


def returned_terms(info) -> tuple:
    """What a function without a return annotation returns, by type terms
    of its ``return`` values (a factory: ``return Foo(...)`` on each path);
    values the function does not show add nothing."""
    receivers = info._receivers
    if receivers is None:
        receivers = info._receivers = ReceiverTypes(info)
    groups = []
    for value in info.returned_values:
        groups.append(receivers.terms(value))
    return _union(groups)


def annotation_terms(node: Optional[ast.AST], ctx, depth: int = 0) -> tuple:
    if node is None or depth > MAX_DEPTH:
        return ()
    t = type(node)
    if t is ast.Constant:
        if isinstance(node.value, str):
            try:
                parsed = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                return ()
            return annotation_terms(parsed, ctx, depth + 1)
        return ()
    if t is ast.BinOp and isinstance(node.op, ast.BitOr):
        return _union((annotation_terms(node.left, ctx, depth + 1), annotation_terms(node.right, ctx, depth + 1)))
    if t is ast.Subscript:
        head = dotted(node.value) or ""
        last = head.rsplit(".", 1)[-1]
        if last in ("Optional", "Union"):
            inner = node.slice
            parts = inner.elts if isinstance(inner, ast.Tuple) else [inner]
            return _union(annotation_terms(part, ctx, depth + 1) for part in parts)
        if last in ("Annotated", "Final", "ClassVar"):
            inner = node.slice
            first = inner.elts[0] if isinstance(inner, ast.Tuple) and inner.elts else inner
            return annotation_terms(first, ctx, depth + 1)
        return ()
    text = dotted(node)
    if not text or "()" in text:
        return ()
    found = _dotted_name_terms(text, ctx)
    if found:
        return found
    if text in BUILTIN_CONSTRUCTORS or text in ("None", "Any", "object"):
        return (library_term("builtins"),) if text in BUILTIN_CONSTRUCTORS else ()
    return ()


#: annotations of containers whose entries, read by key or index, are of the
#: one type they name last (``Dict[K, V]``, ``List[V]``)
_MAPPINGS = frozenset({"Dict", "dict", "Mapping", "MutableMapping", "OrderedDict", "DefaultDict", "defaultdict"})
_SEQUENCES = frozenset({"List", "list", "Sequence", "MutableSequence"})
#: the calls on a mapping that hand back one of its entries (or the default)
_ENTRY_LOOKUPS = frozenset({"get", "pop"})


def element_annotation_terms(node: ast.AST, ctx) -> tuple:
    """The terms of an entry of a container annotated ``node``; () for
    another annotation (an entry of ``Optional[Dict[K, V]]`` is a ``V`` too)."""
    if type(node) is not ast.Subscript:
        return ()
    last = (dotted(node.value) or "").rsplit(".", 1)[-1]
    inner = node.slice
    parts = inner.elts if type(inner) is ast.Tuple else [inner]
    if last == "Optional" or last == "Union":
        return _union(element_annotation_terms(part, ctx) for part in parts)
    if last in _MAPPINGS and len(parts) == 2 or last in _SEQUENCES and len(parts) == 1:
        return annotation_terms(parts[-1], ctx)
    return ()


def declares_one_object(func, ctx) -> bool:
    """Whether a function's return annotation names one class that is not a
    standard-library type (``-> nn.Module``, ``-> "Engine"``; not
    ``Optional[...]``, a union, a container or a builtin): every return
    hands back an object of that class, never None, so which of its returns
    a test chose tells which object, not its structure."""
    node = getattr(func, "returns", None)
    return node is not None and _declares_one_class(node, ctx)


def declared_object_names(info) -> frozenset:
    """Local names that hold one object of one class wherever they are
    bound: declared so (``queue: MessageQueue``, or handed back as they are,
    ``return queue``, by a function that :func:`declares_one_object`), and
    bound only by plain assignments from calls (the constructor in one arm,
    a factory in the other).  Every binding gives an object of that class,
    never None, so a test choosing which binding a rank ran tells which
    object (what it was built with: its contents), not its None-ness or
    kind.  A name bound any other way (a loop, an unpacking, ``None``, a
    parameter, ``:=``) is left out.  Read from the statements alone."""
    statements = binding_statements(info)
    if statements is None:
        return frozenset()
    returns_one = declares_one_object(info.func, info.ctx)
    declared = set()
    called: dict = {}  # name -> every binding so far is a plain assignment from a call
    for stmt in statements:
        t = type(stmt)
        if t is ast.Assign:
            single = len(stmt.targets) == 1 and type(stmt.value) is ast.Call
            for target in stmt.targets:
                for name in target_names(target):
                    called[name] = called.get(name, True) and single and type(target) is ast.Name
        elif t is ast.AnnAssign:
            if type(stmt.target) is ast.Name:
                name = stmt.target.id
                called[name] = called.get(name, True) and (stmt.value is None or type(stmt.value) is ast.Call)
                if _declares_one_class(stmt.annotation, info.ctx):
                    declared.add(name)
        elif t is ast.Return:
            if returns_one and type(stmt.value) is ast.Name:
                declared.add(stmt.value.id)
        else:
            for name in other_bindings(stmt):
                called[name] = False
    if not declared or info.binds_in_expressions():
        return frozenset()
    return frozenset(name for name in declared if called.get(name) and name not in info.annotations
                     and name not in param_names(info.func))


def binding_statements(info) -> Optional[list]:
    """The statements of a function's blocks (``info.blocks``: nested
    definitions' bodies left out, an ``except`` handler read as one), each
    once, for a reader of every binding of its local names; None where the
    function has a ``case``: its pattern binds names no such reader follows,
    in whichever block it lies (its cases' bodies read after it)."""
    found = []
    for block in {id(block): block for block in info.blocks.values()}.values():
        if type(block[0]) is ast.match_case:
            return None
        found += block
    return found


def other_bindings(stmt: ast.AST):
    """The local names a statement other than an assignment binds."""
    t = type(stmt)
    if t is ast.AugAssign or t is ast.For or t is ast.AsyncFor:
        yield from target_names(stmt.target)
    elif t is ast.With or t is ast.AsyncWith:
        for item in stmt.items:
            if item.optional_vars is not None:
                yield from target_names(item.optional_vars)
    elif t is ast.Delete:
        for target in stmt.targets:
            yield from target_names(target)
    elif t is ast.Import or t is ast.ImportFrom:
        yield from imported_names(stmt)
    elif t is ast.Global or t is ast.Nonlocal:
        yield from stmt.names
    elif t is ast.ExceptHandler:
        if stmt.name:
            yield stmt.name
    elif t is ast.FunctionDef or t is ast.AsyncFunctionDef or t is ast.ClassDef:
        yield stmt.name


def _declares_one_class(node: ast.AST, ctx) -> bool:
    """Whether an annotation names one class that is not a standard-library
    type (as :func:`declares_one_object` reads a return annotation)."""
    if type(node) is ast.Constant and isinstance(node.value, str):
        try:
            node = ast.parse(node.value, mode="eval").body
        except SyntaxError:
            return False
    if type(node) not in (ast.Name, ast.Attribute):
        return False
    terms = annotation_terms(node, ctx)
    return bool(terms) and not any(term[0] == "library" for term in terms)


def binds(fn, shape: tuple) -> bool:
    """Whether a call passing ``shape`` (:data:`~cslint.analysis.callrefs.ANY_ARGUMENTS`)
    can call ``fn`` through an instance, as Python binds arguments: a method
    found by its name alone that takes fewer positional arguments, needs one
    more the call leaves out, or has no parameter of a keyword the call
    names is some other object's method of that name (a module's
    ``register_buffer(name, tensor)``, never a communicator's one-argument
    ``register_buffer(inp)``; a device event's ``record(stream)``, never a
    stream's ``record(output, update)``; a metrics writer's ``log(row,
    commit=True)``, never a timer table's ``log(names, normalizer=1.0)``)."""
    arity = fn.arity
    positional, keywords = shape
    if not arity or (positional < 0 and keywords is None):
        return True
    count, posonly, required, required_keywords = arity
    params = fn.params
    offset = fn.self_offset
    collects = any(p.startswith("*") and not p.startswith("**") for p in params)
    if positional >= 0 and not collects and positional > count - offset:
        return False
    if keywords is None:
        return True
    named = params[posonly:count] + tuple(p for p in params[count:] if not p.startswith("*"))
    taken = params[posonly:offset + positional] if positional >= 0 else ()
    spread = params[-1].startswith("**") if params else False
    for keyword in keywords:
        if keyword in taken or (keyword not in named and not spread):
            return False
    if positional >= 0 and any(p not in keywords for p in params[offset + positional:required]):
        return False
    return all(p in keywords for p in required_keywords)
