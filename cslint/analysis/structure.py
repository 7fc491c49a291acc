"""Reads of a value's structure (see :mod:`cslint.analysis.atoms`, structure
and contents): what the truth of a container, a comparison, a builtin such as
``len`` or ``type`` and a library call that shapes or looks into an object
depend on.  Mixed into :class:`~cslint.analysis.evaluator.Evaluator`, which
supplies ``eval``, ``info`` and ``ctx``.
"""

from __future__ import annotations

import ast
from typing import Optional

from ..presets import KIND_GROUP_MEMBERSHIP
from ..presets.rank_names import names_world_rank
from .astwalk import parameters, walked
from .entries import KEYED_LOOKUPS, dict_view_own, key_read_own, keyed_lookup_own, parted_by
from .environment import fork
from .atoms import (
    CONTENTS, ELEMENTS_HELD, EMPTY, IDENT, KIND, LENGTH, OWN_PARAM, PIECE_PICK, SHAPE, SIZED, attribute, call_result,
    field_read, own_field, own_params, picking_from, project, source, whole,
)
from .callrefs import element, own_results, part_ref
from .noneness import none_of
from .results import nesting
from .iteration import bind_iteration
from .containers import ELEMENT_STORED, SLICE_NAMES, ContainerNames, annotation_is_container, container_index
from .mappings import holds_mapping
from .positions import picks_in_place, repeats_one_value
from .spans import (
    PIECE_OF_CALLS, bound_once, index_numbers, linear_difference, makes_slice, picks_one, picks_piece,
    piece_arguments,
)
from .scope import canonical_text
from .setfields import own_of_set_field
from .syntax import dotted, unparse
from .unanimity import unanimity_read, unanimous_values

#: operands that make ``operand * n`` a sequence of length ``n``
_SEQUENCE_LITERALS = (ast.List, ast.Tuple, ast.ListComp, ast.JoinedStr)
from .vocabulary import (
    ARRAY_TYPES, CONTAINER_FACTORIES, KIND_METHODS, LOOKUP_METHODS, MAPPING_TYPES, PIECE_CALLS,
    PADDINGS, SHAPING_BUILTINS, SHAPING_CALLS, SHAPING_KEYWORDS, SHAPING_POSITIONS, SIZE_ONLY_FACTORIES,
    NUMBER_CONVERSIONS, STRUCTURE_BUILTINS, STRUCTURE_METHODS, TENSOR_FIRST_SHAPING_CALLS,
)

#: what counting an iterable's elements makes of its structure: a length alone, never a kind (``atoms.SIZED``)
_COUNTED = "L--"


def _mapping_param(func, expr, kinds: frozenset = MAPPING_TYPES) -> bool:
    """Whether ``expr`` names a parameter of ``func`` annotated as a mapping
    (``state: Dict[str, Tensor]``): ``key in state`` asks for a key, never
    for the values stored under the keys; the annotation declares what the
    name holds whatever the function binds it to later.  (``kinds``: other
    container types, :data:`ARRAY_TYPES` for an array, ``full: torch.Tensor``.)"""
    args = getattr(func, "args", None)
    if type(expr) is not ast.Name or args is None:
        return False
    for a in parameters(args, starred=False):
        if a.arg == expr.id:
            return annotation_is_container(a.annotation, kinds)
    return False


def _literal(node) -> bool:
    """A literal other than None (``True``, ``0``, ``"a"``): what an identity test against it asks is the value."""
    return type(node) is ast.Constant and node.value is not None


def rows_alike(reads, expr: ast.Subscript) -> Optional[str]:
    """What the index of ``expr`` (read by ``reads``, a :class:`StructureReads`) decides of the element it
    picks where all have one structure (None: another object, with its own): which of a list's elements
    built alike (``CONTENTS``: :meth:`StructureReads.picks_alike`), or which row of a parameter annotated
    as an array that numbers pick (``IDENT``: every row of an array has one shape, which only the numbers'
    own structure may change; never a mask or a list of positions: :func:`~.spans.index_numbers`)."""
    value, index = expr.value, expr.slice
    if type(index) is ast.Slice or type(value) is not ast.Name:
        return None
    if reads.picks_alike(value.id):
        return CONTENTS
    if type(index) is not ast.Constant and _mapping_param(reads.info.func, value, ARRAY_TYPES) \
            and index_numbers(index, reads.bindings()):
        return IDENT  # ``full[coords[0, 0]]`` of ``full: torch.Tensor``
    return None


def _through_import(reads, func) -> bool:
    """``torch.narrow``, ``np.array_split``, ``Tensor.split``: a function
    called through an imported module or class, or imported by its own name
    (``has_torch_function``), not a method of a value."""
    if type(func) is not ast.Attribute:
        return type(func) is ast.Name and func.id in reads.ctx.imports and func.id not in reads.info.local_names
    base = func.value
    while type(base) is ast.Attribute:
        base = base.value
    return type(base) is ast.Name and base.id in reads.ctx.imports and base.id not in reads.info.local_names


def _kind_or_piece(reads, func, last: str, args: tuple, kwargs: tuple, arg_atoms: frozenset) -> frozenset:
    """What a library call takes from its arguments where it reads its first
    argument's kind alone (``torch.is_tensor(x)``, a :data:`KIND_METHODS`
    name called through its module: a type test) or cuts a piece of its
    receiver or first argument (``x.narrow(dim, start, length)``,
    ``torch.narrow(x, ...)``: a piece of ``x``'s kind, :func:`piece_arguments`);
    ``arg_atoms`` for any other."""
    if last in PIECE_OF_CALLS:
        return piece_arguments(args, kwargs, last in TENSOR_FIRST_SHAPING_CALLS and _through_import(reads, func))
    if _through_import(reads, func):
        return project(KIND, args[0]).union(*args[1:], *(a for _, a in kwargs))
    return arg_atoms


def _shaping_arguments(reads, func, last: str, args: tuple, kwargs: tuple) -> frozenset:
    """What a library call that shapes a value (:data:`SHAPING_CALLS`) takes
    from its arguments: the sizes given become the result's shape, whole; a
    factory's size (:data:`SIZE_ONLY_FACTORIES`) makes a length only, never
    the kind of what it makes; the others as they are."""
    arg_atoms = EMPTY
    positions = SHAPING_POSITIONS.get(last)
    shift = 0
    if last in TENSOR_FIRST_SHAPING_CALLS and _through_import(reads, func):
        # ``torch.narrow(x, dim, start, length)``: ``x`` is what is cut
        shift = 1
    factory = last in SIZE_ONLY_FACTORIES
    for index, a in enumerate(args):
        if index < shift:
            arg_atoms |= a
        elif factory and not index:
            arg_atoms |= project(SIZED, a)
        else:
            arg_atoms |= whole(a) if positions is None or index - shift in positions else a
    for name, a in kwargs:
        arg_atoms |= (project(SIZED, a) if factory else whole(a)) if name in SHAPING_KEYWORDS else a
    return arg_atoms


def _is_unset_marker(node) -> bool:
    """``-1`` or ``None``: what a variable holding a rank holds when unset."""
    if type(node) is ast.Constant:
        return node.value is None or (type(node.value) is int and node.value < 0)
    return type(node) is ast.UnaryOp and type(node.op) is ast.USub and type(node.operand) is ast.Constant \
        and type(node.operand.value) is int and node.operand.value > 0


#: call references whose callee the whole-tree pass finds among the functions of the tree
_PICKED_FROM = frozenset({"func", "qual"})


def _piece_picks(expr: ast.Subscript, value: frozenset, index: frozenset, ctx) -> Optional[frozenset]:
    """``f(...)[i]`` or ``pieces[i]`` of ``pieces = f(...)``, ``i`` no slice, where the results of calls
    ``value`` holds (beside what decided that the binding ran) are all of functions of the file's module or
    of its own top-level package: one ``PIECE_PICK`` part of each
    (:data:`~cslint.analysis.atoms.PIECE_PICK`), its one argument the index read as a length (``SIZED``),
    its fallback ``index`` (what the index decides of another object), which the whole-tree pass reads as
    the first where the callee hands back pieces of one value, else as the second.  None for any other
    subscript."""
    if not picks_one(expr.slice):
        return None
    package = ctx.module.partition(".")[0]
    picks = []
    sized = None
    for atom in value:
        if atom.tag != "R":
            continue
        ref = atom.ref
        if ref.tag not in _PICKED_FROM or ref.tag == "qual" and ref.dotted.partition(".")[0] != package:
            return None
        if ref.tag == "func" and not _may_cut(ctx, ref.qualname):
            return None  # (a function of this file that calls no cutting method: the index as it is)
        if sized is None:
            sized = project(SIZED, index)
        picks.append(call_result(part_ref(PIECE_PICK, ref), (sized,), (), index, atom.path, atom.line, atom.text,
                                 1 + nesting(index)))
    return frozenset(picks) if picks else None


def _may_cut(ctx, qualname: str) -> bool:
    """Whether the function ``qualname`` of ``ctx``'s module calls a method named like a cut
    (:data:`~cslint.analysis.vocabulary.PIECE_CALLS`): else none of its returns hands back pieces."""
    known = ctx.__dict__.setdefault("_may_cut", {})
    found = known.get(qualname)
    if found is None:
        function = ctx.definitions().get(qualname)
        found = known[qualname] = function is not None and any(
            type(node) is ast.Call and type(node.func) is ast.Attribute and node.func.attr in PIECE_CALLS
            for node in walked(function))
    return found


class StructureReads(ContainerNames):
    """How an expression reads its operands' structure or contents."""

    def truth(self, expr: Optional[ast.AST], env: dict) -> frozenset:
        """What the truth of ``expr`` depends on: a container's truth is
        whether it is empty (its structure), a number's is its value."""
        t = type(expr)
        if t is ast.UnaryOp and type(expr.op) is ast.Not:
            return self.truth(expr.operand, env)
        if t is ast.BoolOp:
            atoms = EMPTY
            for value in unanimous_values(self, expr, env):
                atoms |= self.truth(value, env)
            return atoms
        if (t is ast.Name or t is ast.Attribute) and self._is_container(expr):
            return project(LENGTH, self.own_structure(expr, env))
        return self.eval(expr, env)

    def own_structure(self, expr, env: dict) -> frozenset:
        """What ``expr`` depends on, for a read of its own structure alone
        (its truth, length, None-ness, kind; a loop's trip count): of a
        container an element is stored into, what is kept apart from the
        elements' (:meth:`kept_apart`); of anything else, all of its value."""
        found = self.kept_apart(expr, env)
        return self.eval(expr, env) if found is None else found

    def kept_apart(self, expr, env: dict, params: bool = True) -> Optional[frozenset]:
        """The own structure of a local container stored into (``("own", name)``, :meth:`Flow.write`), of a field of
        this class (``atoms.own_field``), of what a call hands back (``callrefs.own_results``, also through a name
        bound to it), of a parameter (``atoms.own_params``, unless not ``params``); None for anything else."""
        t = type(expr)
        if t is ast.Name:
            name = expr.id
            if name in env and not (self._uniform_texts and name in self._uniform_texts):
                found = env.get(("own", name))
                if self.watch is not None:
                    self.watch.read(("own", name), found)
                if found is not None:
                    self._env_reads += 1
                    return found
                return _name_own(self, self.eval(expr, env), params, name)  # (None: none kept apart)
        elif t is ast.Call:
            if self.ctx.returns_own_structure(self.info.resolve_ref(expr.func)):
                return own_results(self.eval(expr, env), self.ctx.returns_own_structure)
            func = expr.func
            if type(func) is ast.Attribute and func.attr in KEYED_LOOKUPS and self.info.self_attr(func.value):
                return keyed_lookup_own(self.info, self.eval(expr, env))  # ``self.cache.get(k)``
            return dict_view_own(self, expr, env)  # ``plan.items()``: as long as the returned dict
        elif t is ast.Subscript:  # ``maps["k"]``, ``f()["k"]``: the value a call returns under a constant key
            return key_read_own(self, expr, env, self.info.element_stores)
        elif t is ast.ListComp or t is ast.GeneratorExp:  # one element per iteration, read straight
            return self.comprehension_length(expr, env)
        elif t is ast.Attribute:
            ctx = self.ctx
            index = ctx.container_index
            if index is None:
                index = ctx.container_index = container_index(ctx.tree)
            if expr.attr not in index[ELEMENT_STORED] and self.info.self_attr(expr) is None:
                # (another file's method may store into it: the whole-tree pass reads the field itself)
                return None
            value = self.eval(expr, env)
            if self.info.self_attr(expr) in self.set_fields:  # what this function set it to (setfields)
                return own_of_set_field(value, self.info.class_key, expr.attr)
            (atom,) = value if len(value) == 1 else (None,)
            if atom is not None and atom.tag == "F" and atom.class_key == self.info.class_key and atom.attr == expr.attr:
                return frozenset({field_read(atom.class_key, own_field(atom.attr))})
        return None

    def generated(self, expr, inner: dict) -> frozenset:
        """What a comprehension's generators make of its number of elements: the iterables' own structure, as a
        loop's trip count (their contents reach the elements through the targets only) and the filters' truth, a
        length made from values (``_COUNTED``, ``SIZED``: never its kind); binds the targets in ``inner``."""
        atoms = EMPTY
        for gen in expr.generators:
            own = self.kept_apart(gen.iter, inner)  # (None: not kept apart from its elements')
            atoms |= project(_COUNTED, self.eval(gen.iter, inner) if own is None else own)
            bind_iteration(self, gen.target, gen.iter, inner, EMPTY, inner.__setitem__)
            for cond in gen.ifs:
                atoms |= project(SIZED, self.truth(cond, inner))  # a filter decides the length
        return atoms

    def comprehension_length(self, expr: ast.ListComp, env: dict) -> frozenset:
        """A list comprehension's own structure: one element per iteration its generators and filters let
        through, whatever the element is (``[build(i) for i in range(n)]`` has ``n`` elements on every rank,
        however each rank's ``build(i)`` differs)."""
        self._env_reads += 1
        inner = fork(env)
        memo, self.args_memo = self.args_memo, None
        try:
            return self.generated(expr, inner)
        finally:
            self.args_memo = memo

    def enumerate_position(self, iterable, env: dict) -> Optional[frozenset]:
        """What the index of ``for i, x in enumerate(xs, start)`` depends on:
        it counts the elements before ``x``, so it reads the structure of
        ``xs`` as the loop's trip count does (:meth:`trip_count`), and
        ``start``, never an element; None where ``iterable`` is no call of
        the builtin ``enumerate``."""
        inner = iterable
        if type(inner) is not ast.Call or type(inner.func) is not ast.Name or inner.func.id != "enumerate" \
                or not inner.args or len(inner.args) > 2 or type(inner.args[0]) is ast.Starred \
                or inner.keywords or not self._is_builtin("enumerate"):
            return None
        position = self.trip_count(inner.args[0], env)
        if len(inner.args) == 2:
            position = position | self.eval(inner.args[1], env)
        return position

    def _eval_compare(self, expr: ast.Compare, env: dict) -> frozenset:
        """A comparison reads values, except ``is`` (identity, None-ness; against a literal, the value) and a
        key's membership in a key set (a string key, or any key of a mapping:
        :func:`_mapping_param`, :func:`~.mappings.holds_mapping`), which read structure (and the key); its
        result is a bool, whose own structure is the same everywhere."""
        atoms = EMPTY
        left = expr.left
        left_atoms = self.eval(left, env)
        own = self.own_structure
        for op, right in zip(expr.ops, expr.comparators):
            right_atoms = self.eval(right, env)
            kind = type(op)
            if kind is ast.Is or kind is ast.IsNot:
                if _literal(left) or _literal(right):
                    # ``flag is True``: True, False, a small int, a string literal are one object per value, so
                    # whether a value is that object follows the value, not its structure alone
                    atoms |= left_atoms | right_atoms
                else:
                    atoms |= project(LENGTH, self._none_ness(left, right, env, left_atoms, right_atoms))
            elif (kind is ast.In or kind is ast.NotIn) and (type(left) is ast.Constant and type(left.value) is str
                                                             or _mapping_param(self.info.func, right)
                                                             or holds_mapping(self.ctx, self.info.func, right)):
                atoms |= left_atoms | project(LENGTH, own(right, env))
            elif (kind is ast.Eq or kind is ast.NotEq) and (_is_unset_marker(left) or _is_unset_marker(right)):
                # ``local_rank != -1``: no rank is negative, so this asks
                # whether the value is set, not which rank this is
                atoms |= project(LENGTH, own(left, env)) | project(LENGTH, own(right, env))
            else:
                atoms |= left_atoms | right_atoms
            left, left_atoms = right, right_atoms
        return project(CONTENTS, atoms)

    def _none_ness(self, left, right, env: dict, left_atoms: frozenset, right_atoms: frozenset) -> frozenset:
        """What ``left is right`` reads of its operands: their own structure,
        or, where one is None, whether the other is None alone
        (:func:`~cslint.analysis.noneness.none_of`), where that is narrower.
        ``left_atoms``, ``right_atoms``: the operands' values, as read already."""
        own = self.own_structure
        for tested, other, value in ((left, right, left_atoms), (right, left, right_atoms)):
            if type(other) is ast.Constant and other.value is None:
                found = none_of(self, tested, env, value)
                return own(tested, env) if found is None else found
        return own(left, env) | own(right, env)

    def _tests_group_membership(self, test: ast.Compare) -> bool:
        """``rank in ranks`` where this module builds a group from ``ranks``
        (``new_group(ranks)``): whether this rank belongs to the group is the
        same on every member of that group, and a rank outside it takes no
        part in what the group does.  So picking the group (and whatever is
        built from it) under the test is uniform where it matters: inside the
        group."""
        if len(test.ops) != 1 or type(test.ops[0]) not in (ast.In, ast.NotIn):
            return False
        members = self.ctx.group_members
        if not members:
            return False
        right = unparse(test.comparators[0])
        return right in self.ctx.group_member_texts and names_world_rank(unparse(test.left))

    def membership_value(self, test: ast.Compare) -> frozenset:
        """What ``rank in ranks`` (:meth:`_tests_group_membership`) holds as
        a value (``member = rank in ranks``; ``n = 1`` under it): alike on
        the members of the group made from ``ranks``, where its picks are
        used, but not on any other group's.  So it is a source of its own
        kind (``KIND_GROUP_MEMBERSHIP``, the test's text) with no
        dimensions: uniform wherever it is read, until the guard of a
        collective over another group reads it as this rank's id
        (:func:`~cslint.analysis.guards.with_membership_armed`)."""
        marker = source(KIND_GROUP_MEMBERSHIP, unparse(test), self.ctx.path, test.lineno, ())
        return project(CONTENTS, frozenset({marker}))

    def membership_reads(self, test, env: dict) -> frozenset:
        """What the tests of membership in a group's own list that ``test``
        makes (the whole test, under ``not``, or an operand of its
        ``and``/``or``) read as a guard: the rank and the list.  As a value
        such a test is uniform (:meth:`_tests_group_membership`: what it
        picks is used inside the group), but whether a collective runs under
        it is the same only among the group's members: a collective over
        another group under it still parts that group's ranks, and only a
        collective over the group made from the list drops it
        (:func:`~cslint.analysis.grouptests.tests_membership`)."""
        t = type(test)
        if t is ast.UnaryOp and type(test.op) is ast.Not:
            return self.membership_reads(test.operand, env)
        if t is ast.BoolOp:
            atoms = EMPTY
            for value in test.values:
                atoms |= self.membership_reads(value, env)
            return atoms
        if t is ast.Compare and self._tests_group_membership(test):
            return self._eval_compare(test, env)
        return EMPTY

    def display(self, expr, env) -> frozenset:
        """A dict display, whose keys make its key set, or ``[x] * n``, whose repeat count is its length."""
        if type(expr) is ast.Dict:
            atoms = EMPTY
            for key in expr.keys:
                if key is not None:
                    atoms |= whole(self.eval(key, env))
            for value in expr.values:
                atoms |= self.eval(value, env)
            return atoms
        left, right = self.eval(expr.left, env), self.eval(expr.right, env)
        if isinstance(expr.left, _SEQUENCE_LITERALS):
            right = whole(right)
        if isinstance(expr.right, _SEQUENCE_LITERALS):
            left = whole(left)
        return left | right

    def builtin_read(self, name: str, call: ast.Call, args: tuple, kwargs: tuple, arg_atoms: frozenset, env):
        """A builtin that reads structure (``len``, ``type``, ``isinstance``),
        makes it (``range(n)``) or reads an attribute by name (``getattr``);
        None for any other builtin."""
        if name in STRUCTURE_BUILTINS and args:
            rest = EMPTY
            for a in args[1:]:
                rest |= a
            for _, a in kwargs:
                rest |= a
            own = self.kept_apart(call.args[0], env)
            return project(STRUCTURE_BUILTINS[name], args[0] if own is None else own) | rest
        if name in NUMBER_CONVERSIONS and call.args and not any(type(a) is ast.Starred for a in call.args):
            return project(NUMBER_CONVERSIONS[name], arg_atoms)  # a number, whatever it converts
        if name == "bool" and len(call.args) == 1 and not kwargs and type(call.args[0]) is not ast.Starred:
            # ``bool(x)`` is ``x``'s truth: a container's, whether it is empty
            return self.truth(call.args[0], env)
        if (name == "range" or name == "slice") and 2 <= len(call.args) <= 3 and not kwargs:
            return self.span(call.args[0], call.args[1], call.args[2] if len(call.args) == 3 else None, env)
        if name in SHAPING_BUILTINS:
            return whole(arg_atoms)
        if name == "getattr" and len(call.args) >= 2 and type(call.args[1]) is ast.Constant \
                and type(call.args[1].value) is str:
            # ``getattr(obj, "name", default)`` reads the attribute, and with a
            # default whether ``obj`` has it at all: where it is None too (presentfields.py)
            rest = project(SHAPE, args[0]) if len(call.args) > 2 and any(a.tag == "F" for a in args[0]) else EMPTY
            for a in args[2:]:
                rest |= a
            return attribute(args[0], call.args[1].value) | rest
        return unanimity_read(self, name, call, env)  # ``all(v == mine for v in gathered)``

    def library_call_parts(self, func, last: str, receiver: frozenset, args: tuple, kwargs: tuple,
                           arg_atoms: frozenset) -> tuple:
        """``(receiver, arguments)`` of a library call that looks an element up
        by key (``d.get(k)``), reads its receiver's structure (``x.size()``) or
        makes a shape from sizes (``torch.empty(n)``), as its result depends on them."""
        if last in LOOKUP_METHODS:
            if args and type(func) is ast.Attribute:
                arg_atoms = whole(args[0])
                for a in args[1:]:
                    arg_atoms |= a
                for _, a in kwargs:
                    arg_atoms |= a
        elif receiver and (last in STRUCTURE_METHODS or last in KIND_METHODS):  # ``x.size()``, ``x.element_size()``
            receiver = project(LENGTH if last in STRUCTURE_METHODS else KIND, receiver)
        elif (last in KIND_METHODS or last in PIECE_OF_CALLS) and args:  # ``torch.is_tensor(x)``, ``x.narrow(...)``
            arg_atoms = _kind_or_piece(self, func, last, args, kwargs, arg_atoms)
        elif last in SHAPING_CALLS and arg_atoms:
            arg_atoms = _shaping_arguments(self, func, last, args, kwargs)
        elif args and canonical_text(dotted(func), self.ctx.imports) in PADDINGS:  # ``F.pad(x, widths, value=v)``
            arg_atoms = args[0].union(*(project(SIZED, a) for a in args[1:]), *(project(SIZED, a) for _, a in kwargs))
        return receiver, arg_atoms

    def _is_builtin(self, name: str) -> bool:
        ctx = self.ctx
        return name not in self.info.local_names and name not in ctx.module_functions \
            and name not in ctx.module_classes and name not in ctx.imports and name not in ctx.module_globals

    def element_read(self, expr: ast.Subscript, env) -> frozenset:
        """``x[index]``: what ``x`` and the index depend on; a constant index of a tuple or key of a dict display a
        call returns (``f()[1]``, ``f()["n"]``, ``counts[1]`` of ``counts = f()``) reads that element alone; one
        of the pieces a value was cut into, its contents and size (:func:`~.spans.picks_piece`)."""
        parted = parted_by(self.ctx, expr.slice)
        if parted is not None:
            return element(expr.slice.value, self.eval(expr.value, env), parted)
        value = self.eval(expr.value, env)
        if picks_piece(expr, self.bindings(), self.info.resolve_ref, self.ctx, self.info.func):
            return value | project(SIZED, self.eval(expr.slice, env))
        if repeats_one_value(expr.value) and self._picks_one(expr.slice):
            return value  # ``[n, n][rank]``: every element is the one value
        index = self.index(expr.slice, env)
        if index and type(expr.value) is ast.Name and type(expr.slice) is not ast.Constant \
                and picks_in_place(self.info, expr.value.id) and self._picks_one(expr.slice):
            # (``lens[1 - rank]`` of a parameter: a caller handing a display of one value repeated gets that value)
            index = picking_from(index, self.info.key, self.info.params.index(expr.value.id))
        picks = _piece_picks(expr, value, index, self.ctx) if index and self._call_value(expr.value) else None
        return value | (index if picks is None else picks)

    def _picks_one(self, index) -> bool:
        """Whether ``x[index]`` picks one element (not a slice, nor several keys)."""
        return picks_one(index) and not (type(index) is ast.Name and self._names_slice(index.id))

    def _call_value(self, value) -> bool:
        """Whether ``value`` is a call, or a name the function binds once, to a call."""
        if type(value) is ast.Name:
            value = self.bindings().get(value.id)
        return type(value) is ast.Call

    def index(self, index, env) -> frozenset:
        """What ``x[index]`` depends on besides ``x``: the element a rank-local
        index or key picks is another object, with its own structure
        (``queues[rank]`` is this rank's queue); a slice is :meth:`span`, and
        so is ``slice(lo, hi)``, also through a name bound once to one."""
        t = type(index)
        if t is ast.Slice or (makes_slice(index) or t is ast.Name and self._names_slice(index.id)) \
                and self._is_builtin("slice"):
            return self.eval(index, env)
        if t is ast.Tuple:
            atoms = EMPTY
            for element in index.elts:
                atoms |= self.index(element, env)
            return atoms
        return whole(self.eval(index, env))

    def _names_slice(self, name: str) -> bool:
        """Whether ``name`` is bound once, to ``slice(lo, hi)`` (only a
        file that binds a name to one is asked: :data:`SLICE_NAMES`)."""
        ctx = self.ctx
        index = ctx.container_index
        if index is None:
            index = ctx.container_index = container_index(ctx.tree)
        return name in index[SLICE_NAMES] and makes_slice(self.bindings().get(name))

    def bindings(self) -> dict:
        """:func:`~cslint.analysis.spans.bound_once` of this function, once."""
        found = self._bindings
        if found is None:
            info = self.info
            found = self._bindings = bound_once(info.func if not isinstance(info.func, ast.Module) else info.body,
                                                self.ctx.may_hold_walrus)
        return found

    def span(self, lower, upper, step, env) -> frozenset:
        """A slice ``[lower:upper:step]`` or ``range(lower, upper, step)``: the
        bounds pick which elements (contents); the length is what
        ``upper - lower`` still reads once terms both share cancel, so
        ``x[rank * n:(rank + 1) * n]`` has ``n`` elements on every rank, and
        so has ``x[start:end]`` after ``start = rank * n`` and ``end = start +
        n`` (names the function binds once, :func:`~cslint.analysis.spans.linear_difference`)."""
        bounds = EMPTY
        for bound in (lower, upper):
            if bound is not None:
                bounds |= self.eval(bound, env)
        length = EMPTY
        if lower is None or upper is None:
            length = bounds
        else:
            # the same bounds come back on every pass of the dataflow: their
            # difference (a walk and an ast.dump per leaf) is worked out once
            differences = self._differences
            key = (id(upper), id(lower))
            known = differences.get(key)
            if known is None or known[0] is not upper or known[1] is not lower:
                known = differences[key] = (upper, lower, linear_difference(upper, lower, self.bindings()))
            difference = known[2]
            if difference is None:
                length = bounds
            else:
                for leaf in difference:
                    length |= self.eval(leaf, env)
        if step is not None:
            length |= self.eval(step, env)
        return project(SIZED, length) | project(CONTENTS, bounds)


def builds_library_object(last: str, ref) -> bool:
    """Whether a call named ``last`` builds an object of a library class (``CamelCase``, by
    Python's naming convention, under a private alias too: ``import Comm as _Comm``; no container factory)."""
    return "A" <= last.lstrip("_")[:1] <= "Z" and last not in CONTAINER_FACTORIES and (ref is None or ref.tag == "qual")


def containers_held(reads: StructureReads, call: ast.Call, args: tuple, kwargs: tuple, arg_atoms: frozenset,
                    env: dict) -> frozenset:
    """What a library object built from containers depends on: of a
    container whose own structure is kept apart
    (:meth:`StructureReads.kept_apart`: a list filled by ``append``, a
    comprehension), its own structure, and its elements only held inside the
    object (``Adagrad(partitions)`` has one parameter group per partition on
    every rank, whatever each rank's partition is)."""
    out = None
    for index, arg in enumerate(call.args):
        if type(arg) is ast.Starred or index >= len(args) or not args[index]:
            continue
        own = reads.kept_apart(arg, env)
        if own is None:
            continue
        if out is None:
            out = list(args)
        out[index] = own | project(ELEMENTS_HELD, args[index])
    if out is None:
        return arg_atoms
    atoms = EMPTY.union(*out)
    for _, kw_atoms in kwargs:
        atoms |= kw_atoms
    return atoms


def _name_own(reads, value: frozenset, params: bool, name: str) -> Optional[frozenset]:
    """The own structure of a name holding ``value`` with none kept apart
    in the environment: the own part of each result of a call that keeps
    one (``callrefs.own_results``) and of each parameter (``params_own``);
    None for a name a loop or comprehension binds (an element: not its
    container's own structure, though its atoms are the container's)."""
    keyed = keyed_lookup_own(reads.info, value)  # ``found = self.cache.get(key)``
    if keyed is not None:
        return None if name in reads.info.iteration_targets else keyed
    parted = own_results(value, reads.ctx.returns_own_structure)
    owned = params_own(reads.info, value if parted is None else parted) if params else None
    found = parted if owned is None else owned
    return None if found is None or name in reads.info.iteration_targets else found


def params_own(info, atoms: frozenset) -> Optional[frozenset]:
    """``atoms.own_params`` of ``atoms``, noting the parameters whose own
    part the function reads (``FunctionInfo.own_params`` of ``info``: the whole-tree
    pass fills a table for each of those only)."""
    found = None
    for atom in atoms:
        if atom.tag == "P" and atom.index < OWN_PARAM:
            if found is None:
                found = []
            found.append(atom)
    if found is None:
        return None
    for atom in found:
        info.own_params.add(atom.index)
    return own_params(atoms, found)
