"""Which names of a function hold a container, mixed into the structure reads (:class:`ContainerNames`): a name or
``self.attr`` a body annotates as a container or assigns one to (a display, a comprehension, ``[x] * n``, a container
factory), read off one pass over the file's statements (:func:`container_index`, which also notes the attributes
an element is stored into and the names bound to a slice); the fields the methods of a class assign a container to;
and a list bound once to a comprehension whose elements all have one structure, or every binding of which makes a
list of elements of one structure and which nothing changes or hands on (``picks_alike``)."""

from __future__ import annotations

import ast

from ..presets import KIND_RANK_ID
from .astwalk import BLOCKS_OF, imported_names, walk as fast_walk, walked
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
    index[ALIKE_BOUND] = frozenset(index.get(ALIKE_BOUND, ()))
    return index


#: The key of :func:`container_index` under which it keeps the attribute
#: names a statement of the file stores an element into (``obj.xs[k] = v``,
#: ``obj.xs.append(v)``: see :meth:`~cslint.analysis.transfer.Transfer.field_writes`).
ELEMENT_STORED = "element-stored attributes"


#: ... and the names a statement binds to ``slice(lo, hi)`` (see :meth:`StructureReads.index`).
SLICE_NAMES = "names bound to a slice"


#: ... and the names a statement binds to a list whose elements have one structure by construction
#: (:func:`makes_alike_list`; see :meth:`ContainerNames.picks_alike`).
ALIKE_BOUND = "names bound to a list of elements alike"


def makes_alike_list(value) -> bool:
    """Whether ``value`` makes a new list whose elements all have one structure, whichever the values:
    ``x.tolist()`` (a tensor's: numbers of its one dtype, or nested lists of one length each, which its shape
    gives; whether ``x`` is a tensor is the caller's question, :func:`_tensor_list`),
    ``[c] * n`` (``n`` times the one literal ``c``), a display of number literals of one type (``[0, 0]``)."""
    t = type(value)
    if t is ast.Call:
        func = value.func
        return type(func) is ast.Attribute and func.attr == "tolist" and not value.args and not value.keywords
    if t is ast.BinOp and type(value.op) is ast.Mult:
        # (a literal only: the one object a name holds may change later through that name, where the list's
        # value, read when it was bound, does not see it)
        return any(type(side) is ast.List and len(side.elts) == 1 and type(side.elts[0]) is ast.Constant
                   for side in (value.left, value.right))
    if t is ast.List and value.elts:
        kinds = {type(e.value) if type(e) is ast.Constant else None for e in value.elts}
        return len(kinds) == 1 and (int in kinds or float in kinds)
    return False


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
            elif (t is ast.Assign or t is ast.AnnAssign) and makes_alike_list(node.value):
                index.setdefault(ALIKE_BOUND, set()).update(
                    target.id for target in (node.targets if t is ast.Assign else (node.target,))
                    if type(target) is ast.Name)
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


#: builtins whose result holds no reference to what they are given (a number, a bool, a string, a type): a
#: list or an element handed to one can change through it neither now nor later
_VALUE_BUILTINS = frozenset({
    "len", "sum", "any", "all", "bool", "str", "repr", "isinstance", "int", "float", "type", "abs", "round", "hash",
})

#: builtins handing back one of the elements of the list they are given
_ELEMENT_BUILTINS = frozenset({"max", "min"})

#: how many names deep an element is followed through names bound to it (``n = counts[rank]``)
_ALIAS_DEPTH = 3


def _identity_of(compare: ast.Compare, node) -> bool:
    """Whether ``compare`` asks whether ``node`` is an object other than None (``mine is counts[0]``): which of the
    alike elements a rank picked decides that, while an identity test reads its operands' own structure alone."""
    operands = (compare.left, *compare.comparators)
    for index, op in enumerate(compare.ops):
        if type(op) is ast.Is or type(op) is ast.IsNot:
            left, right = operands[index], operands[index + 1]
            if left is node and not _is_none(right) or right is node and not _is_none(left):
                return True
    return False


def _is_none(node) -> bool:
    return type(node) is ast.Constant and node.value is None


#: methods that, among the values a program calls ``tolist()`` on, only a tensor has (an array or a series has
#: none): what they hand back is a tensor
_TENSOR_METHODS = frozenset({"cpu", "cuda", "detach"})

#: the tensor types a parameter's annotation may name (``t: torch.Tensor``); an array, which may hold objects of
#: any kind (``dtype=object``), is not one
_TENSOR_TYPES = frozenset({"Tensor", "Parameter"})


def _tensor_list(reads, call: ast.Call, nodes: list, parents: dict) -> bool:
    """Whether ``call`` is ``x.tolist()`` of a tensor, whose elements are numbers of its one dtype or nested lists
    as long as its shape says (an array or a series of objects may hold None beside numbers):
    :func:`_holds_a_tensor` of ``x``."""
    return _holds_a_tensor(reads, call.func, nodes, parents, 0)


#: how many tensor methods deep (``t.detach().cpu()``, a name bound to one) a receiver is followed
_TENSOR_CHAIN_DEPTH = 8


def _holds_a_tensor(reads, method: ast.Attribute, nodes: list, parents: dict, depth: int) -> bool:
    """Whether the receiver of ``method`` (an attribute called) is a tensor: every type the function shows for
    it is a tensor type (an annotation), or it is made by :func:`_makes_tensor`, itself or in every binding of a
    name.  A parameter without such an annotation, or a name bound otherwise, may hold anything."""
    ref = reads.info.resolve_ref(method)
    typed = ref is not None and ref.tag == "typed" and bool(ref.terms) \
        and all(term[0] == "named" and str(term[1]).rpartition(".")[2] in _TENSOR_TYPES for term in ref.terms)
    receiver = method.value
    if type(receiver) is not ast.Name:
        return typed or _makes_tensor(reads, receiver, nodes, parents, depth)
    # (an annotated parameter bound again to an object array is no tensor there: every binding must make one)
    made = parameter = False
    for node in nodes:
        if type(node) is ast.arg and node.arg == receiver.id:
            parameter = True
        elif type(node) is ast.Name and node.id == receiver.id and type(node.ctx) is not ast.Load:
            parent = parents.get(id(node))
            if type(parent) is not ast.Assign or not any(target is node for target in parent.targets) \
                    or not _makes_tensor(reads, parent.value, nodes, parents, depth):
                return False
            made = True
    return typed or made and not parameter


def _makes_tensor(reads, value, nodes: list, parents: dict, depth: int) -> bool:
    """A call that hands back a tensor: a tensor's method (:data:`_TENSOR_METHODS`) called on a tensor
    (:func:`_holds_a_tensor`: a tree class may have its own ``cpu()``), or a function of the ``torch`` module
    itself (``torch.tensor``, ``torch.clamp``; not ``torch.load``, which unpickles any object, nor what its
    submodules hand back) or of ``torch.nn.functional``."""
    if type(value) is not ast.Call or depth > _TENSOR_CHAIN_DEPTH:
        return False
    func = value.func
    if type(func) is ast.Attribute and func.attr in _TENSOR_METHODS:
        return _holds_a_tensor(reads, func, nodes, parents, depth + 1)
    text = dotted(func)
    head = text.partition(".")[0] if text else None
    if head is None or head not in reads.ctx.imports or head in reads.info.local_names or "." not in text:
        return False
    module, _, name = (reads.ctx.imports[head] + text[len(head):]).rpartition(".")
    return module == "torch" and name not in _TORCH_NON_TENSOR_FUNCTIONS or module == "torch.nn.functional"


#: functions of the ``torch`` module itself that hand back something other than a tensor
_TORCH_NON_TENSOR_FUNCTIONS = frozenset({"load", "compile", "device", "Size", "get_default_dtype", "is_tensor"})


class _InPlaceReads:
    """Whether a list and the elements picked from it are only read where they are (see
    :meth:`ContainerNames._bound_alike_and_kept`): ``parents`` maps each node of the function to its parent."""

    def __init__(self, reads, nodes: list, parents: dict):
        self.reads = reads
        self.nodes = nodes
        self.parents = parents

    def _builtin(self, call, node, names: frozenset) -> bool:
        func = call.func
        return type(func) is ast.Name and func.id in names and self.reads._is_builtin(func.id) \
            and any(arg is node for arg in call.args)

    def list_read(self, node) -> bool:
        """A load of the list's name: compared, formatted, measured, or an element picked from it."""
        parent = self.parents.get(id(node))
        t = type(parent)
        if t is ast.Compare or t is ast.FormattedValue or t is ast.Assert and parent.msg is node:
            return True
        if t is ast.Tuple and type(self.parents.get(id(parent))) is ast.Assert \
                and self.parents[id(parent)].msg is parent:
            return True
        if t is ast.Call:
            if self._builtin(parent, node, _VALUE_BUILTINS):
                return True
            return self._builtin(parent, node, _ELEMENT_BUILTINS) and self.element_read(parent, 0)
        if t is ast.Subscript and parent.value is node and type(parent.ctx) is ast.Load:
            return self.element_read(parent, 0)
        return False

    def element_read(self, node, depth: int) -> bool:
        """An element of the list (or a name bound to one, ``depth`` names deep), read where it is: compared,
        computed with, tested, formatted, measured, an element picked from it in turn, or bound to a name read so
        in turn -- never a method called on it, stored into, handed to another call or kept elsewhere, through
        which an element of a nested list could change its length; nor tested for identity with another object."""
        parent = self.parents.get(id(node))
        t = type(parent)
        if t is ast.Compare:
            return not _identity_of(parent, node)
        if t is ast.BinOp or t is ast.UnaryOp or t is ast.FormattedValue:
            return True
        if (t is ast.If or t is ast.While or t is ast.IfExp or t is ast.Assert) and parent.test is node:
            return True
        if t is ast.Call:
            return self._builtin(parent, node, _VALUE_BUILTINS)
        if t is ast.Subscript and parent.value is node and type(parent.ctx) is ast.Load:
            return self.element_read(parent, depth)
        if t is ast.Assign and parent.value is node and depth < _ALIAS_DEPTH \
                and all(type(target) is ast.Name for target in parent.targets):
            names = {target.id for target in parent.targets}
            if any((type(other) is ast.Global or type(other) is ast.Nonlocal) and names.intersection(other.names)
                   for other in self.nodes):
                return False  # (bound for the module or an enclosing function, which may change it later)
            return all(self.element_read(load, depth + 1) for load in self.nodes
                       if type(load) is ast.Name and load.id in names and type(load.ctx) is not ast.Store)
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
            ctx = self.ctx
            index = ctx.container_index
            if index is None:
                index = ctx.container_index = container_index(ctx.tree)
            if name not in self._own_containers() and name not in index[ALIKE_BOUND]:
                # a name bound to a comprehension is a container name, one bound to ``t.tolist()`` is noted
                # apart (the same statements' index): most functions need no walk
                return False
            self._alike = frozenset()  # an element that indexes a list of its own
            info = self.info
            body = info.func if not isinstance(info.func, ast.Module) else info.body
            found = set()
            for bound, comp in _single_comprehensions(body).items():
                if self._elements_alike(comp):
                    found.add(bound)
            if type(info.func) in _FUNCTIONS and index[ALIKE_BOUND]:
                nodes = walked(info.func)
                bound_here = {node.id for node in nodes if type(node) is ast.Name and type(node.ctx) is ast.Store}
                parents: dict = {}
                for bound in sorted(index[ALIKE_BOUND] & bound_here):
                    if bound not in found and self._bound_alike_and_kept(nodes, parents, bound):
                        found.add(bound)
            alike = self._alike = frozenset(found)
        return name in alike

    def _bound_alike_and_kept(self, nodes: list, parents: dict, name: str) -> bool:
        """Whether every binding of ``name`` in the function (``nodes``: its nodes, nested definitions included;
        ``parents``: each one's parent, filled on first use) makes a list of elements
        alike (:func:`makes_alike_list`; ``x.tolist()`` of a tensor: :func:`_tensor_list`), none
        other binds it (no parameter, loop target, ``global``/``nonlocal``, augmented assignment, unpacking,
        ``with``/``except``/``import`` name...), and every read of it reads the list where it is
        (:class:`_InPlaceReads`): compared, formatted, measured, an assertion's message, an element picked from it
        and read where it is in turn.  Anything else -- a method call (``append``), an element store, an alias, a
        loop over it, an argument of another call, a return -- may change the list or one of its elements (of a
        nested list: its length), here or through the object handed on, before the pick reads one."""
        if not parents:
            for node in nodes:
                for child in ast.iter_child_nodes(node):
                    parents[id(child)] = node
        bindings = set()
        for node in nodes:
            t = type(node)
            if t is ast.Assign or t is ast.AnnAssign:
                targets = node.targets if t is ast.Assign else (node.target,)
                mine = [target for target in targets if type(target) is ast.Name and target.id == name]
                if not mine or node.value is None:
                    continue  # (an annotation alone binds nothing)
                value = node.value
                if not makes_alike_list(value) or type(value) is ast.Call and not _tensor_list(
                        self, value, nodes, parents):
                    return False
                bindings.update(id(target) for target in mine)
            elif t is ast.arg:
                if node.arg == name:
                    return False
            elif t is ast.Global or t is ast.Nonlocal:
                if name in node.names:
                    return False
            elif t is ast.Import or t is ast.ImportFrom:
                if name in imported_names(node):
                    return False
            elif t is ast.ExceptHandler or t is ast.FunctionDef or t is ast.AsyncFunctionDef or t is ast.ClassDef \
                    or t is ast.MatchAs or t is ast.MatchStar:
                if getattr(node, "name", None) == name:
                    return False
            elif t is ast.MatchMapping:
                if node.rest == name:
                    return False
        if not bindings:
            return False
        reads = _InPlaceReads(self, nodes, parents)
        for node in nodes:
            if type(node) is ast.Name and node.id == name and id(node) not in bindings:
                if type(node.ctx) is not ast.Load or not reads.list_read(node):
                    return False
        return True

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
