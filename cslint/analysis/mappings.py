"""Names that hold a mapping wherever they are read (issue 14 §2.1).

``key in table`` asks whether the key is among the mapping's keys, never
what is stored under them: a cache every rank fills under the same names,
each with its own rank's tensor, has the same key set on every rank::

    self.grads = {}                         # the only assignment of the field
    ...
    if name not in self.grads:              # which names are there
        self.grads[name] = shard_of(param)  # this rank's piece: contents only
        all_reduce(self.grads[name], group)

The comparison then reads the key and the mapping's own structure (its key
set), as it does for a string key or a parameter annotated as a mapping
(``structure._mapping_param``).  A name holds a mapping wherever it is read
when every binding of it builds one: a dict display or comprehension, or a
call of a mapping class (:data:`MAPPING_FACTORIES`):

* a field (``obj.attr``) every assignment of which in the file, on any
  object, builds one (``self.grads = {}``; an annotated assignment with a
  mapping annotation and no value counts too): a plain assignment of one
  target, never unpacked, augmented, a loop's or a ``with``'s target;
* a local name every binding of which in the function is such an
  assignment (no parameter, loop, ``with``, walrus, import or augmented
  binding of it).

A list, a set or a tuple keeps the old reading: ``rank in ranks`` compares
values."""

from __future__ import annotations

import ast

from .astwalk import BLOCKS_OF
from .bindings import local_values
from .syntax import dotted

#: calls that make a mapping (by their text, or the last name of it)
MAPPING_FACTORIES = frozenset({"dict", "defaultdict", "OrderedDict", "Counter"})
#: annotations that declare a mapping (the outermost name of a subscripted one)
_MAPPING_ANNOTATIONS = frozenset({"dict", "Dict", "Mapping", "MutableMapping", "OrderedDict", "DefaultDict",
                                  "defaultdict", "Counter"})


def holds_mapping(ctx, func, expr) -> bool:
    """Whether ``expr``, read in ``func`` of the module ``ctx`` describes,
    names a local or an attribute every binding of which builds a mapping:
    asked once per file for the fields, once per function and name for a
    local (kept on ``ctx.container_fields``, under keys no class has)."""
    t = type(expr)
    if t is not ast.Name and t is not ast.Attribute:
        return False
    memo = ctx.container_fields
    if t is ast.Attribute:
        fields = memo.get(_FIELDS)
        if fields is None:
            fields = memo[_FIELDS] = mapping_fields(ctx.tree)
        return expr.attr in fields
    key = (_FIELDS, id(func), expr.id)
    found = memo.get(key)
    if found is None:
        found = memo[key] = local_mapping(func, expr.id)
    return found


#: the key of the memo under which a file's mapping fields are kept (a tuple: no class key is one)
_FIELDS = ("mapping fields",)


def builds_mapping(value) -> bool:
    """Whether ``value`` makes a new mapping: ``{...}``, ``{k: v for ...}``,
    ``dict(...)``, ``collections.defaultdict(list)``."""
    t = type(value)
    if t is ast.Dict or t is ast.DictComp:
        return True
    if t is not ast.Call:
        return False
    text = dotted(value.func)
    return text is not None and text.rpartition(".")[2] in MAPPING_FACTORIES


def _mapping_annotation(annotation) -> bool:
    if type(annotation) is ast.Subscript:
        annotation = annotation.value
    text = dotted(annotation) if annotation is not None else None
    return text is not None and text.rpartition(".")[2] in _MAPPING_ANNOTATIONS


def mapping_fields(tree: ast.Module) -> frozenset:
    """The attribute names every assignment of which in ``tree`` builds a
    mapping (see the module); one pass over the file's statements, never
    entering an expression."""
    good: set = set()
    bad: set = set()
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        t = type(node)
        if t is ast.Assign:
            single = len(node.targets) == 1 and type(node.targets[0]) is ast.Attribute
            for target in node.targets:
                _note_field_targets(target, single and builds_mapping(node.value), good, bad)
        elif t is ast.AnnAssign:
            builds = builds_mapping(node.value) if node.value is not None else _mapping_annotation(node.annotation)
            _note_field_targets(node.target, builds, good, bad)
        elif t is ast.AugAssign:
            _note_field_targets(node.target, False, good, bad)
        elif t is ast.For or t is ast.AsyncFor:
            _note_field_targets(node.target, False, good, bad)
        elif t is ast.With or t is ast.AsyncWith:
            for item in node.items:
                if item.optional_vars is not None:
                    _note_field_targets(item.optional_vars, False, good, bad)
        for field in BLOCKS_OF[t]:
            stack.extend(getattr(node, field))
    return frozenset(good - bad)


def _note_field_targets(target, builds: bool, good: set, bad: set) -> None:
    """Note the attributes ``target`` assigns: in ``good`` where the
    assignment builds a mapping, else in ``bad``."""
    t = type(target)
    if t is ast.Attribute:
        (good if builds else bad).add(target.attr)
    elif t is ast.Tuple or t is ast.List:
        for elt in target.elts:
            _note_field_targets(elt, False, good, bad)
    elif t is ast.Starred:
        _note_field_targets(target.value, False, good, bad)


def local_mapping(func, name: str) -> bool:
    """Whether every binding of the local ``name`` in ``func`` (its own
    body, nested definitions aside) is an assignment building a mapping,
    and there is at least one; a parameter of that name is no such local."""
    values = local_values(func, name)
    return bool(values) and all(builds_mapping(value) for value in values)
