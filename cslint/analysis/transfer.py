"""Statement semantics: what each kind of statement does to the variables, to
the fields of ``self``, to the buffers of in-place collectives and to the
function's result.  One function per statement kind, used by both walkers:

* the summary walk (:mod:`cslint.analysis.summary`) is flow-insensitive:
  every write adds to what the variable held (a later statement of a loop
  may run first);
* the CFG dataflow (:mod:`cslint.analysis.dataflow`) is flow-sensitive: an
  assignment replaces the value, and a local dict read with constant keys
  keeps one value per key (``{"rank": get_rank(), "step": 0}["step"]`` stays
  uniform).

A walker hands each statement over with a :class:`Flow`: the variables
before the statement, how writes land, the implicit flow at the statement
(the conditions deciding whether it runs) and whether only one rank of the
group can run it (``if world_size == 1:``), where nothing can differ.
"""

from __future__ import annotations

import ast
from typing import Optional

from .astwalk import DEFINITIONS, block_fields
from .atoms import CONTENTS, EMPTY, KINDS_ONLY, SIZED, project
from .callrefs import element
from .copies import rebinding_reach
from .entries import (
    entry_parts, key_read_own,
    keyed_entry_read, returned_by_key, values_own,
)
from .fieldwrites import argument_atoms, field_writes, mutator_call
from .flows import Flow
from .evaluator import Evaluator, unwrapped_iterable
from .receivers import declared_object_names, declares_one_object
from .roots import payload_name, rank_tested, root_constant
from .rootkept import has_root_returns, root_kept_target, root_returned
from .agreedparams import agreeing_callees, passed_names
from .scope import canonical_text
from .shapes import settled_returned_name, tuple_elements
from .complements import names_none_wherever_several_ranks, none_wherever_several_ranks
from .iteration import bind_iteration
from .localdicts import display_keys
from .noneness import none_of, returns_none_somewhere
from .stores import built_comprehension, call_key, split_sizes, statement_key, subscript_key
from .bindings import pairwise, target_names
from .syntax import dotted
from .tuplelists import write_appended_positions
from .vocabulary import BUFFER_KEYWORDS, ELEMENT_ADDERS



def _is_name(node, name: str) -> bool:
    """Whether ``node`` is the variable ``name`` (what comparing its text
    with ``name`` asked, without unparsing every assigned call)."""
    return type(node) is ast.Name and node.id == name


class Transfer:
    """The statement semantics of one function (see the module docstring)."""

    def __init__(self, evaluator: Evaluator):
        self.evaluator = evaluator
        self.info = evaluator.info
        #: (return statement, env, its value's kept_apart, its value's atoms), as :meth:`returned` last read them
        self._returned_read = None

    # -- statements that bind names --------------------------------------------------
    def simple_statement(self, s: ast.stmt, flow: Flow) -> None:
        """Assignments, ``with ... as``, imports, definitions and container
        mutators (``xs.append(x)``); other statements bind nothing."""
        t = type(s)
        if t is ast.Assign or t is ast.AnnAssign or t is ast.AugAssign:
            self.assign(s, flow)
        elif t is ast.With or t is ast.AsyncWith:
            for item in s.items:
                if item.optional_vars is not None:
                    atoms = self.evaluator.eval(item.context_expr, flow.env)
                    for name in target_names(item.optional_vars):
                        flow.write(name, atoms)
        elif t is ast.Import or t is ast.ImportFrom:
            for alias in s.names:
                flow.write((alias.asname or alias.name).split(".")[0], EMPTY)
        elif t in DEFINITIONS:
            flow.write(s.name, EMPTY)
        elif t is ast.Expr:
            call = mutator_call(s)
            if call is not None and isinstance(call.func.value, ast.Name):
                name = call.func.value.id
                atoms = self._mutator_atoms(call, flow)
                flow.write(name, atoms, strong=False, own=self._stored_own(call, name, atoms, flow))
                write_appended_positions(self.evaluator, call, name, flow)  # xs.append((a, b)): tuplelists.py

    def assign(self, s, flow: Flow) -> None:
        """``a = v``, ``a: T = v``, ``a += v``: the targets get the value's
        atoms and the implicit flow; ``a, b = x, y`` pairs the parts."""
        value = s.value
        if value is None:
            return
        evaluate = self.evaluator.eval
        env = flow.env
        kind = type(s)
        targets = s.targets if kind is ast.Assign else [s.target]
        if flow.single_rank or _none_wherever_several_ranks_target(self.info, targets):
            # only one rank runs here, or the name is None on every rank wherever several run: nothing can differ
            for target in targets:
                self._bind(target, EMPTY, flow, False)
            return
        if len(targets) == 1 and type(targets[0]) is ast.Name and kind is not ast.AugAssign \
                and type(value) is ast.Call and _is_name(unwrapped_iterable(value), targets[0].id):
            # `xs = tqdm(xs)` under a rank test: xs yields what it yielded,
            # whichever ranks wrap it
            return
        if all(type(target) is ast.Attribute for target in targets):
            return  # ``self.x = v``: no variable to bind (field_writes reads the value)
        implicit = flow.implicit
        if implicit and len(targets) == 1 and type(targets[0]) is ast.Name and kind is not ast.AugAssign:
            # ``model = model.to("meta")``, ``x = F.pad(x, w)`` on some ranks, or a test choosing which call binds
            # a name declared to hold one object of one class (the constructor on one rank, a factory from the
            # handle it broadcast on the others): their test decides what it holds, not its structure (copies.py)
            through = rebinding_reach(value, targets[0], self.info.ctx.imports, self.declared_objects())
            implicit = project(through, implicit) if through is not None else implicit
        pairs = pairwise(targets, value)
        if pairs is not None:
            for target, part in pairs:
                atoms = evaluate(part, env)
                self._bind(target, atoms | implicit if implicit else atoms, flow, False)
            return
        atoms = evaluate(value, env)
        if implicit:
            atoms = atoms | implicit
        augmented = kind is ast.AugAssign
        if not augmented and len(targets) == 1 and type(targets[0]) is ast.Tuple:
            parts = entry_parts(self.info, targets[0], value, atoms)  # ``a, b = self.pending.pop(k)``
            if parts is not None:
                for elt, part in zip(targets[0].elts, parts):
                    self._bind(elt, part, flow, False)
                return
        own = None
        comp = None if augmented else built_comprehension(value)
        if comp is not None:
            # a list comprehension's length is its generators', kept apart
            # from its elements (``Flow.write``: ``xs`` is an element store);
            # a test each arm of which binds it to the same generators decides
            # its elements only (stores.py)
            own = self.evaluator.comprehension_length(comp, env) | (
                flow.store_implicit(statement_key, s) if implicit else implicit)
        elif not augmented and split_sizes(value) is not None:
            # one piece per size: as many pieces as the sizes list has entries, whatever each size is
            sizes = split_sizes(value)
            own = self.evaluator.kept_apart(sizes, env) if type(sizes) is ast.Name else \
                self.evaluator.comprehension_length(sizes, env)
            own = None if own is None else own | implicit
        elif not augmented and type(value) in (ast.Call, ast.Subscript) and flow.element_stores and any(
                type(target) is ast.Name and target.id in flow.element_stores for target in targets):
            # what a call hands back with its own structure kept apart
            # (``callrefs.own_results``), stored into here, or the value under a
            # constant key of a dict display one hands back: both parts kept apart
            own = self.evaluator.kept_apart(value, env) if type(value) is ast.Call else \
                key_read_own(self.evaluator, value, env, flow.element_stores)
            own = None if own is None else own | implicit
        if own is not None:
            for target in targets:
                if type(target) is ast.Name and target.id in flow.element_stores:
                    flow.write(target.id, atoms, own=own)
                else:
                    self._bind(target, atoms, flow, augmented)
            return
        for target in targets:
            self._bind(target, atoms, flow, augmented)
        if (type(value) is ast.Dict or type(value) is ast.DictComp) and not augmented:
            display_keys(self.evaluator, targets, value, implicit, flow)
        elif not augmented and flow.dict_keys:
            _returned_dict_keys(self.info, targets, value, atoms, flow)

    def _bind(self, target, atoms, flow: Flow, augmented: bool) -> None:
        t = type(target)
        if t is ast.Name:
            flow.write(target.id, atoms, strong=not augmented)
        elif t is ast.Tuple or t is ast.List:
            # ``a, b = f()``: each name holds its own element of what f returns
            by_position = not augmented and not any(type(e) is ast.Starred for e in target.elts)
            for index, elt in enumerate(target.elts):
                self._bind(elt, element(index, atoms, self.info.ctx.returns_tuples) if by_position else atoms,
                           flow, augmented)
        elif t is ast.Starred:
            self._bind(target.value, atoms, flow, augmented)
        elif t is ast.Subscript:
            base = target.value
            if type(base) is ast.Name:
                key = self.evaluator.eval(target.slice, flow.env)
                own = None
                if base.id in flow.element_stores and type(target.slice) is not ast.Slice:
                    own = self.own_before(base, flow)
                    if id(target) not in self.info.existing_key_stores:
                        own = own | key | flow.store_implicit(subscript_key, target)  # a new key, on the ranks that store
                flow.write(base.id, atoms | key, strong=False, own=own)
                key = target.slice.value if isinstance(target.slice, ast.Constant) else None
                if isinstance(key, str) and key in flow.dict_keys.get(base.id, ()):
                    flow.write(("key", base.id, key), atoms, strong=not augmented)
        # attribute targets are field writes (field_writes)

    def walrus(self, nodes, flow: Flow) -> None:
        """``(name := value)`` anywhere in the statement's own expressions."""
        for node in nodes:
            flow.write(node.target.id, self.evaluator.eval(node.value, flow.env) | flow.implicit)

    def loop_target(self, s, flow: Flow, strong: bool = False, iter_env: Optional[dict] = None) -> frozenset:
        """``for target in it``: the target takes every element; returns the atoms of the trip count (the
        structure of ``it``).  ``strong``: the header binds it anew (the dataflow, whose way out of the loop adds
        back what it held before); else it also keeps what it held.  ``iter_env``: what the elements drawn are
        read in (what reaches the loop from outside), where no iteration changes what a later one draws."""
        evaluator = self.evaluator
        implicit = flow.implicit
        trips = evaluator.trip_count(s.iter, flow.env)
        owner, own = values_own(evaluator, s, flow.env, flow.element_stores)  # ``d.items()``'s value's own kept apart
        bind_iteration(evaluator, s.target, s.iter, flow.env if iter_env is None else iter_env, implicit,
                       lambda name, value: flow.write(name, value, strong, own | implicit if name == owner else None),
                       count_env=flow.env)
        return trips

    def exception_name(self, handler: ast.ExceptHandler, atoms: frozenset, flow: Flow) -> None:
        """``except E as name``: the name holds the caught exception, whose
        atoms the walker knows (what made the ``try`` body raise)."""
        if handler.name:
            flow.write(handler.name, atoms)

    def inplace_collectives(self, calls, flow: Flow, dataflow=None, node: int = -1) -> None:
        """A collective that writes its buffer in place makes the buffer
        uniform over its group (``dist.all_reduce(t)``), and so does a call
        of a function of the module that does that to its parameter
        (:func:`~cslint.analysis.agreedparams.agreed_in_place`);
        ``calls`` are the statement's :class:`~cslint.analysis.function.CallInfo`.
        So does a broadcast's payload on its root (:mod:`~cslint.analysis.roots`:
        node ``node`` of ``dataflow`` runs only where this rank is tested equal to it),
        and, there, the names handed to a helper of the module that broadcasts
        them from that root (:mod:`~cslint.analysis.rootkept`)."""
        info = self.info
        collective = info.ctx.atoms.collective
        root_helpers = dataflow is not None and calls and has_root_returns(info.ctx)
        for call_info in calls:
            match = call_info.match
            if match is None:
                if root_helpers and call_info.raw:
                    self._root_kept(call_info.call, flow, dataflow, node)
                if call_info.raw and agreeing_callees(info.ctx):
                    ref = info.resolve_ref(call_info.call.func)
                    if ref is not None and (ref.tag == "func" or ref.tag == "method"):
                        for name, group in passed_names(info.ctx, call_info.call, ref):
                            flow.write(name, collective(group, flow.current().get(name, EMPTY)))
                continue
            if match.spec is None:
                continue
            call = call_info.call
            if dataflow is not None and match.spec.root_arg is not None:
                name = payload_name(call, match.spec)
                root = root_constant(call, match.spec) if name is not None else None
                if root is not None and root in rank_tested(dataflow, node, flow.current()):
                    flow.write(name, collective(match.group, flow.current().get(name, EMPTY)))
            for index in match.spec.inplace:
                if index < len(call.args) and isinstance(call.args[index], ast.Name):
                    name = call.args[index].id
                    flow.write(name, collective(match.group, flow.current().get(name, EMPTY)))
            for kw in call.keywords:
                if kw.arg in BUFFER_KEYWORDS and isinstance(kw.value, ast.Name):
                    flow.write(kw.value.id, collective(match.group, flow.current().get(kw.value.id, EMPTY)))

    def _root_kept(self, call: ast.Call, flow: Flow, dataflow, node: int) -> None:
        """A call of a helper of the module that broadcasts the names it is
        passed from a root (:mod:`~cslint.analysis.rootkept`), made where
        this rank is that root: the names hold what the call hands back, as
        the other ranks' ``names = call`` binds them."""
        info = self.info
        ref = info.resolve_ref(call.func)
        if ref is None or (ref.tag != "func" and ref.tag != "method"):
            return
        target = root_kept_target(info.ctx, call, ref)
        if target is not None and root_returned(info.ctx, ref).root in rank_tested(dataflow, node, flow.current()):
            self._bind(target, self.evaluator.eval(call, flow.env), flow, False)

    # -- what the statement passes on to the rest of the tree -------------------------
    def returned(self, s: ast.Return, flow: Flow) -> tuple:
        """The atoms ``return value`` adds to the function's result, its
        elements when it writes out a tuple (``return count, agreed``; ``()``
        for any other value, None when it gives none) and its own structure
        where that is kept apart from its elements' (None: the whole value):
        see :meth:`~cslint.analysis.records.Variant.add_return`.  A list or
        tuple written out has the implicit flow alone as its own structure
        (its length is the display's), a comprehension its generators'
        (``comprehension_length``), a container an element is stored into
        what the dataflow keeps apart (``StructureReads.kept_apart``)."""
        value = s.value
        self._returned_read = None
        if value is None or flow.single_rank or _none_wherever_several_ranks(self.info):
            return EMPTY, None, None  # (the last: None in a world of several ranks, anything in a world of one)
        implicit = flow.implicit
        t = type(value)
        if t is ast.Constant and value.value is None:
            return implicit, None, None  # a caller that unpacks the result never reads this path's elements
        if implicit and t is ast.Name and settled_returned_name(self.info.func) == value.id:
            implicit = EMPTY if self.hands_back_a_value_everywhere() else implicit  # one value, whichever way out
        written = value.elts if t is ast.Tuple or t is ast.List else tuple_elements(value)  # (or a tuple either way)
        if written is not None and not any(type(e) is ast.Starred for e in written):
            elements = [self.evaluator.eval(e, flow.env) for e in written]
            # an element is chosen as a return of its value is; the tuple as
            # a whole, and its length, keep the tests
            parts = tuple(atoms | self.choice_reaching(atoms, implicit) for atoms in elements)
            atoms = frozenset().union(implicit, *parts)
            return atoms, parts if t is not ast.List and parts else (), implicit
        if implicit and self.declares_one_object():
            # a test choosing between objects of the one class the function
            # declares: which object (what it was built with, its contents),
            # as a constructor's arguments are; never its None-ness or kind
            implicit = project(CONTENTS, implicit)
        env = flow.env
        if t is ast.Dict:
            keyed = returned_by_key(self, value, env, implicit)
            if keyed is not None:
                return keyed
        if t is ast.ListComp:
            own = self.evaluator.comprehension_length(value, env)
        else:
            own = self.evaluator.kept_apart(value, env)
        atoms = self.evaluator.eval(value, env)
        self._returned_read = (s, env, own, atoms)  # (for :meth:`returned_none`, next, on the same flow)
        parts = self._forwarded_elements(atoms, implicit) if t is ast.Call else ()
        implicit = self.choice_reaching(atoms, implicit)
        return atoms | implicit, parts, None if own is None else own | implicit

    def _forwarded_elements(self, atoms: frozenset, implicit: frozenset) -> tuple:
        """The elements of ``return split(x, rank)``, ``atoms`` its value, where
        ``split`` is a function of this module each of whose returns writes
        out a tuple of one length: each that element of the call's result
        (``callrefs.element``, as ``a, b = split(x, rank)`` reads it), with
        the tests choosing this return, as for a tuple written out; ``()``
        (none apart) for any other call."""
        ctx = self.info.ctx
        lengths = {ctx.returned_tuple_length(atom.ref) for atom in atoms if atom.tag == "R"}
        length = lengths.pop() if len(lengths) == 1 else 0
        return tuple(part | self.choice_reaching(part, implicit)
                     for part in (element(index, atoms, ctx.returns_tuples) for index in range(length)))

    def returned_none(self, s: ast.Return, flow: Flow) -> Optional[frozenset]:
        """What decides whether ``return value`` hands back None, where that
        is narrower than the value's own structure (:mod:`~cslint.analysis.noneness`):
        the tests choosing this return and :func:`~cslint.analysis.noneness.none_of`
        the value; None where it is not (a return of None: the tests alone,
        as :meth:`returned` gives them), or where the function has no
        ``return None`` to tell apart from its values."""
        value = s.value
        if value is None or (type(value) is ast.Constant and value.value is None) or flow.single_rank \
                or not returns_none_somewhere(self.info) or _none_wherever_several_ranks(self.info):
            return None
        read = self._returned_read
        if read is not None and read[0] is s and read[1] is flow.env and type(value) is not ast.ListComp:
            none = none_of(self.evaluator, value, flow.env, read[3], read[2])  # (what :meth:`returned` read)
        else:
            none = none_of(self.evaluator, value, flow.env)
        if none is None:
            return None
        implicit = flow.implicit
        if implicit and type(value) is ast.Name and settled_returned_name(self.info.func) == value.id \
                and self.hands_back_a_value_everywhere():
            implicit = EMPTY  # one value, whichever way out (as :meth:`returned` reads it)
        return none | implicit

    def choice_reaching(self, atoms: frozenset, implicit: frozenset) -> frozenset:
        """What the tests choosing a return (``implicit``) add to a value of
        ``atoms`` it hands back (:func:`agreed_group`)."""
        group = agreed_group(atoms) if implicit else None
        if group is not None and self.hands_back_a_value_everywhere():
            return self.info.ctx.atoms.collective(group, implicit)
        return implicit

    def hands_back_a_value_everywhere(self) -> bool:
        """:func:`hands_back_a_value_everywhere` of the function (once)."""
        found = self.__dict__.get("_value_everywhere")
        if found is None:
            found = self.__dict__["_value_everywhere"] = hands_back_a_value_everywhere(self.info.func)
        return found

    def declares_one_object(self) -> bool:
        """:func:`~cslint.analysis.receivers.declares_one_object` of the function (once)."""
        found = self.__dict__.get("_one_object")
        if found is None:
            found = self.__dict__["_one_object"] = declares_one_object(self.info.func, self.info.ctx)
        return found

    def declared_objects(self) -> frozenset:
        """:func:`~cslint.analysis.receivers.declared_object_names` of the function (once)."""
        found = self.__dict__.get("_declared_objects")
        if found is None:
            found = self.__dict__["_declared_objects"] = declared_object_names(self.info)
        return found

    def yielded(self, s: ast.stmt, flow: Flow) -> frozenset:
        """The atoms ``yield value`` adds to the result of a ``@contextmanager``
        function: what ``with f() as v`` binds to ``v``."""
        if type(s) is not ast.Expr or type(s.value) is not ast.Yield or s.value.value is None \
                or flow.single_rank or not self.info.is_context_manager:
            return EMPTY
        return self.evaluator.eval(s.value.value, flow.env) | flow.implicit

    def field_writes(self, s: ast.stmt, flow: Flow, fields: list, field_types: list) -> None:
        """What ``s`` writes into the fields of ``self`` (:func:`cslint.analysis.fieldwrites.field_writes`):
        nothing in a function the call scan saw write no field (``may_write_field``, which every shape
        ``field_writes`` records makes true: a store into or a deletion of ``self.attr``, a store into an
        attribute's element, a method called on ``self.attr``; a module function's is never true)."""
        if self.info.may_write_field is not False:
            field_writes(self, s, flow, fields, field_types)

    def own_before(self, container: ast.Name, flow: Flow) -> frozenset:
        """What the container's own structure depended on before this
        statement (the name itself where nothing was kept apart yet: a
        module-level or enclosing container)."""
        found = flow.current().get(("own", container.id))
        if found is not None:
            return found
        return self.evaluator.eval(container, flow.current())

    def _stored_own(self, call: ast.Call, name: str, atoms: frozenset, flow: Flow) -> Optional[frozenset]:
        """The container's own structure after ``name.append(v)`` and the
        like (:data:`ELEMENT_ADDERS`): what it was, the other arguments (an
        index, a key) and the implicit flow; None for any other mutator,
        which changes the container by the whole of its arguments."""
        if name not in flow.element_stores:
            return None
        own = self._added_element_own(call, flow)
        return None if own is None else self.own_before(call.func.value, flow) | own

    def _added_element_own(self, call: ast.Call, flow: Flow) -> Optional[frozenset]:
        """What ``xs.append(v)`` and the like (:data:`ELEMENT_ADDERS`) change
        of the container itself: the other arguments (an index, a key) and
        the implicit flow; None for any other mutator, which changes it by
        the whole of its arguments."""
        position = ELEMENT_ADDERS.get(call.func.attr)
        if position is None or position >= len(call.args) or call.keywords \
                or any(type(arg) is ast.Starred for arg in call.args):
            return None
        own = project(SIZED, flow.store_implicit(call_key, call))  # (how many it holds, never its kind)
        for index, arg in enumerate(call.args):
            if index != position:
                own = own | self.evaluator.eval(arg, flow.env)
        return own

    def _mutator_atoms(self, call: ast.Call, flow: Flow) -> frozenset:
        return flow.implicit | argument_atoms(self.evaluator, call, flow)


def _none_wherever_several_ranks(info) -> bool:
    """:func:`~cslint.analysis.complements.none_wherever_several_ranks` of the function (once)."""
    found = info.__dict__.get("_none_several")
    if found is None:
        imports = info.ctx.imports
        knowledge = info.ctx.knowledge
        found = info.__dict__["_none_several"] = none_wherever_several_ranks(
            info.func, lambda call: canonical_text(dotted(call.func), imports),
            knowledge.job_tests, knowledge.world_sizes)
    return found


def _none_wherever_several_ranks_target(info, targets: list) -> bool:
    """Whether an assignment binds one local name that is None on every rank wherever several run."""
    return len(targets) == 1 and type(targets[0]) is ast.Name \
        and targets[0].id in _names_none_wherever_several_ranks(info)


def _names_none_wherever_several_ranks(info) -> frozenset:
    """:func:`~cslint.analysis.complements.names_none_wherever_several_ranks` of the function (once): a call
    counts where it calls a function or method of this module that hands back None wherever the world has
    several ranks (most modules have none, and their functions are not walked)."""
    found = info.__dict__.get("_names_none_several")
    if found is None:
        callees = _none_wherever_several_ranks_definitions(info.ctx)
        found = info.__dict__["_names_none_several"] = names_none_wherever_several_ranks(
            info.func, lambda call: _qualname_called(info, call) in callees) if callees else frozenset()
    return found


def _none_wherever_several_ranks_definitions(ctx) -> frozenset:
    """The qualified names of the module's functions and methods that hand back None wherever the world has
    several ranks (:func:`~cslint.analysis.complements.none_wherever_several_ranks`), found once per module."""
    found = ctx.__dict__.get("_none_several_definitions")
    if found is None:
        knowledge = ctx.knowledge
        imports = ctx.imports
        found = ctx.__dict__["_none_several_definitions"] = frozenset(
            qualname for qualname, function in ctx.definitions().items()
            if none_wherever_several_ranks(function, lambda c: canonical_text(dotted(c.func), imports),
                                           knowledge.job_tests, knowledge.world_sizes))
    return found


def _qualname_called(info, call: ast.Call) -> Optional[str]:
    """The qualified name, in this module, of the function or method ``call`` calls; None for any other."""
    ref = info.resolve_ref(call.func)
    tag = ref.tag if ref is not None else None
    if tag == "func" and ref.module == info.ctx.module:
        return ref.qualname
    if tag == "method":
        module, _, cls = ref.class_key.partition(":")
        if module == info.ctx.module:
            return f"{cls}.{ref.name}"
    return None


def hands_back_a_value_everywhere(func) -> bool:
    """Whether every way out of ``func`` hands back a value: each of its
    ``return`` statements names one other than ``None`` and its body never
    runs off its end (:func:`_runs_off_end`)."""
    body = getattr(func, "body", None)
    if not isinstance(body, list) or _runs_off_end(body):
        return False
    todo = list(body)
    for stmt in todo:  # statements only, through their blocks: a ``return`` is one
        kind = type(stmt)
        if kind is ast.Return:
            value = stmt.value
            if value is None or (type(value) is ast.Constant and value.value is None):
                return False
        elif kind not in DEFINITIONS:
            for name in block_fields(kind):
                todo.extend(getattr(stmt, name))
    return True


def _runs_off_end(stmts: list) -> bool:
    """Whether a block may finish without a ``return`` or ``raise``: its last
    statement is neither, nor an ``if``/``else``, ``with`` or ``try`` each
    way through which ends in one (a loop may always be left)."""
    if not stmts:
        return True
    last = stmts[-1]
    kind = type(last)
    if kind is ast.Return or kind is ast.Raise:
        return False
    if kind is ast.If:
        return not last.orelse or _runs_off_end(last.body) or _runs_off_end(last.orelse)
    if kind is ast.With or kind is ast.AsyncWith:
        return _runs_off_end(last.body)
    if kind is ast.Try:
        if last.finalbody and not _runs_off_end(last.finalbody):
            return False
        through = _runs_off_end(last.body) and (not last.orelse or _runs_off_end(last.orelse))
        return through or any(_runs_off_end(handler.body) for handler in last.handlers)
    return True


def agreed_group(atoms: frozenset) -> Optional[str]:
    """The group every atom of ``atoms`` is a uniform collective result over,
    or is made from such results alone: a projection of them (``flags.item()
    > 0``, ``len(parts)``), an attribute read of one (``result.error``) or a
    call whose receiver and arguments are nothing else (``t.tolist()``,
    ``tuple(...)``, ``typing.cast``); None where some atom is anything else,
    or the atoms name no collective at all.

    What every rank of that group got back from one collective is the same
    whichever return hands it on (a root returning the payload it broadcast,
    the others what they received; ``return box[0], box[1]`` after an object
    broadcast into ``box``, element by element): the tests choosing the
    return reach it only as far as the group leaves them
    (``Transfer.choice_reaching``).  Where another way out hands back None
    (a bare ``return``, the end of the body) those tests also say whether
    there is a result, and that return carries them
    (:func:`hands_back_a_value_everywhere`).  A kinds-only source
    (:data:`~cslint.analysis.atoms.KINDS_ONLY`) stays in the value and
    leaves the rest agreed: the root's own tree, mapped into the payload,
    has the containers the others got back."""
    found: set = set()
    for atom in atoms:
        if atom.tag == "S" and atom.whole == KINDS_ONLY:
            continue  # the kinds of the leaves of a tree a broadcast's root mapped into its payload (mirrors.py)
        if not _made_from_collectives(atom, found) or len(found) > 1:
            return None
    return next(iter(found)) if found else None


def _made_from_collectives(atom, found: set, depth: int = 0) -> bool:
    """Whether ``atom`` is a collective result, or made only from collective
    results (:func:`agreed_group`); adds their groups to ``found``.  A call's
    result reads its receiver and arguments only where no function of the
    tree answers it (its fallback): here the question is only which test
    chose the return, and a callee of the tree that reads more than these
    still hands that on through the atom itself."""
    tag = atom.tag
    if tag == "C":
        found.add(atom.group)
        return True
    if depth >= _MADE_FROM_DEPTH:
        return False
    if tag == "J" or tag == "A":
        inner = atom.inner
    elif tag == "R":
        inner = atom.fallback
    else:
        return False
    return bool(inner) and all(_made_from_collectives(part, found, depth + 1) for part in inner)


#: how many projections, attribute reads and calls :func:`_made_from_collectives`
#: looks through before it gives up
_MADE_FROM_DEPTH = 6


def agreed_within(past: tuple, out: dict, collective) -> dict:
    """``out`` along an edge only a group of one rank takes, ``past`` =
    ``(group, names)`` (:func:`~cslint.analysis.edges.single_rank_edges`):
    those names cannot differ within the group there, nor can what the
    dataflow keeps apart for them (a dict's key ``("key", name, k)``, a
    container's own structure ``("own", name)``)."""
    group, names = past
    return {key: collective(group, atoms) if (key if type(key) is str else key[1]) in names else atoms
            for key, atoms in out.items()}


def _returned_dict_keys(info, targets, value, atoms: frozenset, flow: Flow) -> None:
    """``name = f()`` where every return of ``f`` writes out a dict display
    with constant keys (``ModuleContext.returns_dicts``): each key read later
    gets the value ``f`` returns under it (``callrefs.element``); so does
    ``name = self.plans[i]`` of a field such results are appended to
    (``entries.keyed_entry_read``)."""
    call = type(value) is ast.Call
    if not call and type(value) is not ast.Subscript:
        return
    for target in targets:
        if type(target) is ast.Name:
            for key in flow.dict_keys.get(target.id, ()):
                read = element(key, atoms, info.ctx.returns_dicts) if call else keyed_entry_read(
                    info, value, atoms, key)
                if read is not None:
                    flow.write(("key", target.id, key), read)

