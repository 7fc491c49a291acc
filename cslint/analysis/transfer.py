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

from .astwalk import DEFINITIONS, imported_names
from .atoms import EMPTY, SIZED, project
from .callrefs import element
from .copies import rebinding_reach
from .entries import (
    entry_parts, key_read_own,
    keyed_entry_read, values_own,
)
from .fieldwrites import argument_atoms, field_writes, mutator_call
from .flows import Flow
from .evaluator import Evaluator, unwrapped_iterable
from .receivers import declared_object_names
from .resulttransfer import ResultTransfer
from .roots import payload_name, rank_tested, root_constant
from .rootkept import has_root_returns, root_kept_target, root_returned
from .agreedparams import agreeing_callees, passed_names
from .asyncwork import asks_async, async_work
from .wrappers import match_call
from .scope import canonical_text
from .complements import names_none_wherever_several_ranks, none_wherever_several_ranks
from .iteration import bind_iteration
from .localdicts import display_keys
from .stores import built_comprehension, call_key, split_sizes, statement_key, subscript_key
from .bindings import pairwise, target_names
from .syntax import dotted
from .tuplelists import unpacked_positions, write_appended_positions, write_bound_positions
from .vocabulary import BUFFER_KEYWORDS, ELEMENT_ADDERS



def _is_name(node, name: str) -> bool:
    """Whether ``node`` is the variable ``name`` (what comparing its text
    with ``name`` asked, without unparsing every assigned call)."""
    return type(node) is ast.Name and node.id == name


class Transfer(ResultTransfer):
    """The statement semantics of one function (see the module docstring); of
    ``return`` and ``yield``, :class:`~cslint.analysis.resulttransfer.ResultTransfer`'s."""

    def __init__(self, evaluator: Evaluator):
        self.evaluator = evaluator
        self.info = evaluator.info
        ResultTransfer.__init__(self)

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
            for name in imported_names(s):
                flow.write(name, EMPTY)
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
            if self.info.tuple_unpacked and type(value) is ast.Tuple:
                write_bound_positions(self.evaluator, s, flow, EMPTY, unknown=True)
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
        if not augmented and type(value) is ast.Name and len(targets) == 1 and self.info.tuple_unpacked:
            positions = unpacked_positions(self.info, targets[0], value, env)
            if positions is not None:  # ``a, b = saved``: each its own position of a local tuple (tuplelists.py)
                for elt, part in zip(targets[0].elts, positions):
                    self._bind(elt, part | implicit if implicit else part, flow, False)
                return
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
        if type(value) is ast.Tuple and self.info.tuple_unpacked:
            write_bound_positions(self.evaluator, s, flow, implicit)  # ``saved = (a, b)`` (tuplelists.py)
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
                raw = call_info.raw
                if raw is not None and raw.endswith(".wait"):
                    self._waited(call_info.call, flow)
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
            if asks_async(call) and id(call) in async_work(info).deferred:
                continue  # its buffers hold the group's value where its handle is waited on (_waited)
            self._agree_buffers(call, match, flow)

    def _agree_buffers(self, call: ast.Call, match, flow: Flow) -> None:
        """An in-place collective's buffers hold what it agreed over its group."""
        collective = self.info.ctx.atoms.collective
        for index in match.spec.inplace:
            if index < len(call.args) and isinstance(call.args[index], ast.Name):
                name = call.args[index].id
                flow.write(name, collective(match.group, flow.current().get(name, EMPTY)))
        for kw in call.keywords:
            if kw.arg in BUFFER_KEYWORDS and isinstance(kw.value, ast.Name):
                flow.write(kw.value.id, collective(match.group, flow.current().get(kw.value.id, EMPTY)))

    def _waited(self, call: ast.Call, flow: Flow) -> None:
        """``work.wait()`` on the handle of asynchronous collectives bound to ``work``
        (:mod:`~cslint.analysis.asyncwork`): their buffers hold the group's value from here."""
        receiver = call.func.value if type(call.func) is ast.Attribute else None
        if type(receiver) is not ast.Name:
            return
        info = self.info
        bound = async_work(info).waited.get(receiver.id)
        if not bound:
            return
        imports = info.ctx.imports
        for started in bound:
            raw = dotted(started.func)
            match = match_call(info, started, raw, canonical_text(raw, imports)) if raw else None  # as its CallInfo's
            if match is not None and match.spec is not None:
                self._agree_buffers(started, match, flow)

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

    def declared_objects(self) -> frozenset:
        """:func:`~cslint.analysis.receivers.declared_object_names` of the function (once)."""
        found = self.__dict__.get("_declared_objects")
        if found is None:
            found = self.__dict__["_declared_objects"] = declared_object_names(self.info)
        return found

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

