"""Which names of a function hold a container, mixed into the structure reads (:class:`ContainerNames`): a name or
``self.attr`` a body annotates as a container or assigns one to (a display, a comprehension, ``[x] * n``, a container
factory), read off one pass over the file's statements (:func:`container_index`, which also notes the attributes
an element is stored into and the names bound to a slice); the fields the methods of a class assign a container to;
and a list bound once to a comprehension whose elements all have one structure (``picks_alike``)."""

from __future__ import annotations

import ast

from ..presets import KIND_RANK_ID
from .astwalk import BLOCKS_OF, walk as fast_walk, walked
from .atoms import source
from .localdicts import keyed_containers
from .spans import CHANGED, makes_slice, single_bindings
from .syntax import dotted
from .vocabulary import CONTAINER_FACTORIES, CONTAINER_TYPES, ELEMENT_ADDERS

#: displays ``display * n`` repeats into a container of their kind
_REPEATED = (ast.List, ast.Tuple, ast.ListComp)


def annotation_is_container(annotation, kinds: frozenset = CONTAINER_TYPES) -> bool:
    """``List[int]``, ``Optional[dict]``, ``"Sequence[str]"``: a container type (one of ``kinds``)."""
    if annotation is None:
        return False
    if type(annotation) is ast.Constant and type(annotation.value) is str:
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return False
    node = annotation
    while True:
        base = node.value if type(node) is ast.Subscript else node
        name = base.attr if type(base) is ast.Attribute else base.id if type(base) is ast.Name else None
        if name in kinds:
            return True
        if name == "Optional" and type(node) is ast.Subscript:
            node = node.slice
            continue
        if type(node) is ast.BinOp and type(node.op) is ast.BitOr:  # ``list[int] | None``
            return annotation_is_container(node.left, kinds) or annotation_is_container(node.right, kinds)
        return False


def _builds_container(value) -> bool:
    """A value that is a container by construction."""
    t = type(value)
    if t in (ast.List, ast.Dict, ast.Set, ast.Tuple, ast.ListComp, ast.DictComp, ast.SetComp):
        return True
    if t is ast.BinOp and type(value.op) is ast.Mult:  # ``[0] * n``: a list of ``n`` elements
        return type(value.left) in _REPEATED or type(value.right) in _REPEATED
    if t is ast.Call:
        func = value.func
        name = func.id if type(func) is ast.Name else func.attr if type(func) is ast.Attribute else None
        return name in CONTAINER_FACTORIES
    return False


def _container_names(body) -> frozenset:
    """Names (and ``self.attr`` texts) a body annotates as containers or assigns a container to."""
    out = set()
    for node in fast_walk(body) if not isinstance(body, list) else (n for stmt in body for n in fast_walk(stmt)):
        _note_container(node, out)
    return frozenset(out)


def _note_container(node, out: set) -> None:
    """Add what ``node`` itself makes a container (see :func:`_container_names`)."""
    t = type(node)
    if t is ast.Assign:
        if _builds_container(node.value):
            for target in node.targets:
                text = dotted(target)
                if text:
                    out.add(text)
    elif t is ast.AnnAssign:
        if annotation_is_container(node.annotation) or (node.value is not None and _builds_container(node.value)):
            text = dotted(node.target)
            if text:
                out.add(text)
    elif t is ast.arg and annotation_is_container(node.annotation):
        out.add(node.arg)


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def container_index(tree: ast.Module) -> dict:
    """:func:`_container_names` of every function (the whole definition,
    nested ones included), of every class body and of the module body, from
    one pass over the file's statements: ``id(node)`` -> names (a class
    under ``id(node.body)``, the module under ``id(tree)``).

    Only assignments (statements) and a function's own parameters can add a
    name: no expression holds a statement, and a lambda's parameters have no
    annotation.  So the pass never enters an expression, where a walk of
    every node visited ten times as many.  The same pass notes the
    attribute names an element is stored into (:data:`ELEMENT_STORED`)."""
    index: dict = {}
    stored: set = set()
    index[id(tree)] = frozenset(_collect_containers(tree.body, index, stored))
    index[ELEMENT_STORED] = frozenset(stored)
    index[SLICE_NAMES] = frozenset(index.get(SLICE_NAMES, ()))
    return index


#: The key of :func:`container_index` under which it keeps the attribute
#: names a statement of the file stores an element into (``obj.xs[k] = v``,
#: ``obj.xs.append(v)``: see :meth:`~cslint.analysis.transfer.Transfer.field_writes`).
ELEMENT_STORED = "element-stored attributes"


#: ... and the names a statement binds to ``slice(lo, hi)`` (see :meth:`StructureReads.index`).
SLICE_NAMES = "names bound to a slice"


def _note_element_store(node, t, stored: set) -> None:
    """Add the attribute the statement ``node`` (of type ``t``) stores an
    element into, if any."""
    if t is ast.Assign or t is ast.AugAssign or t is ast.AnnAssign:
        for target in node.targets if t is ast.Assign else (node.target,):
            if type(target) is ast.Subscript and type(target.value) is ast.Attribute:
                stored.add(target.value.attr)
            elif type(target) is ast.Attribute and type(node.value) is ast.ListComp and t is not ast.AugAssign:
                stored.add(target.attr)  # a list comprehension's own structure is kept apart
    if t is ast.Expr or t is ast.Assign or t is ast.AnnAssign:
        call = node.value.value if type(node.value) is ast.Await else node.value
        if type(call) is ast.Call and type(call.func) is ast.Attribute and call.func.attr in ELEMENT_ADDERS \
                and type(call.func.value) is ast.Attribute:
            stored.add(call.func.value.attr)


def _collect_containers(statements: list, index: dict, stored: set) -> set:
    """The container names of ``statements`` (see :func:`container_index`),
    noting those of each definition among them in ``index``.  A plain
    function, not a closure: a closure calling itself is a reference cycle,
    which extraction must not leave (the collector is off during a run)."""
    out: set = set()
    stack = list(statements)
    while stack:
        node = stack.pop()
        t = type(node)
        if t is ast.FunctionDef or t is ast.AsyncFunctionDef:
            names: set = set()
            args = node.args
            for arg in (*args.posonlyargs, *args.args, args.vararg, *args.kwonlyargs, args.kwarg):
                if arg is not None:  # (parameters(), written out: every definition of the module)
                    _note_container(arg, names)
            names |= _collect_containers(node.body, index, stored)
            index[id(node)] = frozenset(names)
            out |= names
            continue
        if t is ast.ClassDef:
            names = _collect_containers(node.body, index, stored)
            index[id(node.body)] = frozenset(names)
            out |= names
            continue
        if t is ast.Assign or t is ast.AnnAssign:  # (the statements _note_container reads)
            _note_container(node, out)
        if t is ast.Expr or t is ast.Assign or t is ast.AugAssign or t is ast.AnnAssign:
            _note_element_store(node, t, stored)
            if t is ast.Assign and makes_slice(node.value):
                index.setdefault(SLICE_NAMES, set()).update(
                    target.id for target in node.targets if type(target) is ast.Name)
        fields = BLOCKS_OF[t]
        for field in fields:
            block = getattr(node, field)
            if block:
                stack.extend(block)
    return out


def _single_comprehensions(body) -> dict:
    """Names a body binds exactly once, to a list comprehension, and never
    changes afterwards (no ``append``, no element or slice assignment, no
    augmented assignment): name -> the comprehension."""
    return {name: value for name, value in single_bindings(body).items()
            if name != CHANGED and type(value) is ast.ListComp}


#: references that name a function of this module or class: what a call
#: of one returns is decided by its own code, unknown here
_TREE_REFS = frozenset({"func", "class", "method", "super", "fieldmethod"})


def _marker_shapes(atoms, marker) -> bool:
    """Whether ``marker`` may decide the structure of a value of ``atoms``:
    as a whole source, inside a call of a function of the tree, inside a
    projection or attribute read (resolved later); a call that may be a
    library's is judged by what it reads as one (its fallback)."""
    key = marker[:5]
    for atom in atoms:
        tag = atom.tag
        if tag == "S":
            if atom[:5] == key and atom.whole:
                return True
        elif tag == "R":
            ref = atom.ref.ref if atom.ref.tag == "part" else atom.ref
            if ref.tag in _TREE_REFS:
                if _mentions(atom, key):
                    return True
            elif _marker_shapes(atom.fallback, marker):
                return True
        elif _mentions(atom, key):
            return True
    return False


def _mentions(atom, key) -> bool:
    stack = [atom]
    while stack:
        current = stack.pop()
        tag = current.tag
        if tag == "S":
            if current[:5] == key:
                return True
        elif tag in ("J", "A", "C"):
            stack.extend(current.inner)
        elif tag == "R":
            for arg in current.args:
                stack.extend(arg)
            for _, arg in current.kwargs:
                stack.extend(arg)
            stack.extend(current.fallback)
    return False


class ContainerNames:
    """Mixed into :class:`~cslint.analysis.structure.StructureReads`: reads ``self.info`` (the function) and
    ``self.ctx`` (the module, which keeps the file's container index and its classes' container fields); keeps
    the function's own container names in ``self._containers`` and its lists of alike elements in ``self._alike``."""

    def _own_containers(self) -> frozenset:
        """:func:`_container_names` of this function (nested definitions included)."""
        names = self._containers
        if names is None:
            func = self.info.func
            names = self._containers = self._indexed_containers(func) if isinstance(func, ast.Module) \
                or type(func) in _FUNCTIONS else _container_names(func)
        return names

    def _is_container(self, expr) -> bool:
        names = self._own_containers()
        if type(expr) is ast.Name:
            return expr.id in names or expr.id in keyed_containers(self)
        attr = self.info.self_attr(expr)
        if attr is None:
            return False
        if "self." + attr in names:
            return True
        return attr in self._class_containers()

    def picks_alike(self, name: str) -> bool:
        """Whether ``name`` holds a list whose elements all have one
        structure, so that an index picks which element (contents), not what
        kind of element: ``[flat.narrow(0, i * size, size) for i in
        range(world)]`` holds equal shards, and ``shards[rank]`` has the
        same size on every rank.  The list is bound once, to a comprehension
        whose element's structure does not follow its own loop variables (an
        element built by a call of the tree, whose structure is unknown
        here, does not count)."""
        alike = self._alike
        if alike is None:
            if name not in self._own_containers():
                # a name bound to a comprehension is a container name (the
                # same statements' index): most functions need no walk
                return False
            self._alike = frozenset()  # an element that indexes a list of its own
            info = self.info
            body = info.func if not isinstance(info.func, ast.Module) else info.body
            found = set()
            for bound, comp in _single_comprehensions(body).items():
                if self._elements_alike(comp):
                    found.add(bound)
            alike = self._alike = frozenset(found)
        return name in alike

    def _elements_alike(self, comp: ast.ListComp) -> bool:
        if any(gen.ifs or gen.is_async for gen in comp.generators):
            return False
        marker = source(KIND_RANK_ID, "<element>", self.ctx.path, comp.lineno, (), whole=False)
        env: dict = {}
        for gen in comp.generators:
            for node in walked(gen.target):
                if type(node) is ast.Name:
                    env[node.id] = frozenset({marker})
        memo, self.args_memo = self.args_memo, None
        try:
            atoms = self.eval(comp.elt, env)
        finally:
            self.args_memo = memo
        return not _marker_shapes(atoms, marker)

    def _class_containers(self) -> frozenset:
        """``self.attr`` the methods of this function's class (in this file) assign a container to."""
        ctx = self.ctx
        key = self.info.class_key
        found = ctx.container_fields.get(key)
        if found is None:
            found = frozenset()
            qualname = key.split(":", 1)[1] if key else ""
            node = ctx.tree
            for part in qualname.split("."):
                node = next((c for c in getattr(node, "body", ()) if isinstance(c, ast.ClassDef) and c.name == part),
                            None)
                if node is None:
                    break
            if node is not None:
                found = frozenset(text[5:] for text in self._indexed_containers(node.body) if text.startswith("self."))
            ctx.container_fields[key] = found
        return found

    def _indexed_containers(self, node) -> frozenset:
        """:func:`_container_names` of a function, a class body or the module
        (``node`` is the module: its body), read off the file's
        :func:`container_index`."""
        ctx = self.ctx
        index = ctx.container_index
        if index is None:
            index = ctx.container_index = container_index(ctx.tree)
        found = index.get(id(node))
        if found is None:  # not a definition of this file's tree
            found = _container_names(node.body if isinstance(node, ast.Module) else node)
        return found
