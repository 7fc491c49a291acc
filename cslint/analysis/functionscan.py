"""The one cheap walk of a function body, mixed into the function's facts (:class:`FunctionScan`): the callees' last
names and whether a call is a collective (:class:`CallScan`), and on the way what the summary walk, the dataflow and
the guards read of the body without walking it again: its local names and rebound parameters, raises and local I/O,
signal handlers, whether it may write a field of ``self``, its returned values, the calls, lambdas and walruses each
statement makes itself, local dicts read with constant keys, containers stored into, loop and unpacking targets,
what it does to ``self``, the classes it reads as a value and a classmethod's calls of ``cls`` (constructiongroups.py),
the globals it declares, the attributes of imported names it stores and the first line of a return, yield or await
of its own (memosyntax.py), the names it declares ``global`` or ``nonlocal`` and the definitions nested in its body
(namereach.py), and the nodes that bind a local name or test one (feasibility.py's folds)."""

from __future__ import annotations

import ast
from typing import NamedTuple

from .astwalk import CHILDREN, DEFINITIONS, imported_names
from .bindings import target_names
from .callrefs import is_classmethod
from .classreads import NO_NAMES, TYPE_TESTS, class_names_of, handed_classes, type_tested
from .lists import list_index_stores
from .ownstructure import constant_key_read, existing_key_stores_of
from .rebuilds import candidate as rebuild_candidate
from .scope import canonical_text
from .shapes import loop_values_name
from .stores import built_comprehension, split_sizes
from .syntax import dotted
from .vocabulary import ELEMENT_ADDERS, LOCAL_IO_CALLS, OBJECT_READERS, reads_object_only
from .wrappers import imports_a_wrapper, inherited_collective, match_call, own_nodes, wrapped_models


class CallScan(NamedTuple):
    """What :meth:`FunctionInfo.scan_calls` found."""

    names: frozenset  # the last component of every callee
    has_collective: bool  # a call the presets or the configuration call a collective


#: the attributes :meth:`FunctionScan.scan_calls` notes on its function
SCANNED = ("raises", "local_io", "signal_handlers", "_local", "rebound_params", "callee_names", "returned_values",
           "bare_return",
           "calls_by_statement", "bare_calls", "bare_by_statement", "lambdas_by_statement", "walrus_by_statement",
           "dict_keys",
           "position_reads", "element_stores", "tuple_appended", "tuple_unpacked", "existing_key_stores", "entry_drawn_loops",
           "iteration_targets", "self_calls", "hands_self", "may_write_field", "attach_candidates",
           "rebuild_candidates", "rebuild_fields", "declared_globals", "declared_shared", "nested_definitions",
           "module_stores", "leaves_at", "self_stores", "self_assignments",
           "foreign_stores", "binds_computed_names", "entry_nodes", "value_names", "self_value_names",
           "_binding_nodes")


#: the targets that unpack a value into several
_UNPACKINGS = (ast.Tuple, ast.List)


def _subclasses(node_type: type) -> set:
    found = {node_type}
    for sub in node_type.__subclasses__():
        found |= _subclasses(sub)
    return found


#: calls that bind an attribute named by an argument: (the receiver's position or None for the method's own
#: receiver, the name's position) (lackednames.py)
_NAME_BINDERS = {"setattr": (0, 1), "register_parameter": (None, 0), "register_buffer": (None, 0),
                 "add_module": (None, 0), "register_module": (None, 0)}


#: every statement node type (a set lookup per node of :meth:`FunctionInfo.scan_calls`' walk, not an isinstance call)
_STATEMENT_TYPES = frozenset(_subclasses(ast.stmt))

#: the node types :meth:`FunctionScan.scan_calls` notes something of past its calls (one set lookup for the
#: other nodes, where each was compared with every type of the branches in turn)
_NOTED_TYPES = DEFINITIONS | frozenset((ast.Await, ast.Yield, ast.YieldFrom, ast.Raise, ast.Assert, ast.Return,
                                       ast.NamedExpr, ast.Subscript, ast.Assign, ast.AnnAssign, ast.For, ast.AsyncFor,
                                       ast.comprehension, ast.ExceptHandler, ast.Global, ast.Nonlocal, ast.Import,
                                       ast.ImportFrom))

#: the nodes that bind a local name or test one, which :func:`~cslint.analysis.feasibility.local_bindings` reads
#: (``FunctionScan.binding_nodes``): the body's own, outside nested definitions (their decorators too) and lambdas
BINDING_NODES = frozenset((ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor, ast.comprehension,
                           ast.With, ast.AsyncWith, ast.NamedExpr, ast.ExceptHandler, ast.Import, ast.ImportFrom,
                           ast.Delete, ast.Global, ast.Nonlocal, ast.If, ast.While, ast.FunctionDef,
                           ast.AsyncFunctionDef, ast.ClassDef))


class FunctionScan:
    """Mixed into :class:`~cslint.analysis.function.FunctionInfo`: walks ``self.func`` once, reading its parameters,
    ``self_name`` and module context, and notes what it finds on ``self``."""

    def scan_state(self, scan: CallScan) -> tuple:
        """What :meth:`scan_calls` found and noted on this function (``scan`` its answer), to be put on
        another extractor of the same definition of the same tree (:meth:`restore_scan`)."""
        noted = self.__dict__
        return scan, {name: noted[name] for name in SCANNED}

    def restore_scan(self, state: tuple) -> CallScan:
        """Note what :meth:`scan_state` kept of another extractor's scan of the same definition, as
        :meth:`scan_calls` would note it, and give its answer.  Nothing a scan notes is changed
        afterwards (its containers are only read), so the two extractors may share them."""
        scan, noted = state
        self.__dict__.update(noted)
        return scan

    def scan_calls(self) -> CallScan:
        """Callee names and whether a call is a collective, from one cheap walk, which also notes raises, loops
        and the function's local names (the summary walk needs them and a second walk cost as much again)."""
        names, collective = set(), False
        self.raises = False
        self.built_own_class = ()
        self.local_io = False
        self.bare_return = False
        self.signal_handlers = []
        declared_globals: set = set()  # ``global G`` (memosyntax.global_stores)
        declared_shared: set = set()  # ``global G`` and ``nonlocal n`` of its own (namereach.py)
        nested_definitions = []  # the functions and classes defined in its own body (their bodies not walked here)
        module_stores = []  # ``mod.G = ...`` of an imported name: (name, attribute, line)
        leaves_at = None  # the first line of a return, yield or await of its own (memosyntax.leading_calls)
        imports = self.ctx.imports
        may_write_field = decorated = False  # decorated: a nested definition's decorators were walked too
        local = set(self.param_names)
        local.discard(self.self_name)
        params, rebound = frozenset(local), set()  # rebound: the parameters a store binds again
        dict_keys, position_reads = {}, {}  # name -> its str keys, its other constant keys (positions.py)
        element_stores: set = set()  # xs[k] = v, xs.append(v)
        tuple_appended: set = set()  # xs.append((a, b))
        tuple_unpacked: set = set()  # a, b = saved
        existing_key_stores, entry_drawn_loops, iteration_targets, read_only = set(), set(), set(), set()
        returned, index_stores = [], []  # index_stores: xs[k] = v (lists.py)
        attach_candidates = []  # ``obj.attr = name_or_attribute`` (attached.py)
        rebuild_candidates = []  # ``self.attr = local`` or ``self.attr = call(...)`` (rebuilds.py)
        self_stores, foreign_stores = set(), set()  # attribute names stored on ``self``, on anything else (held_store)
        self_assignments = []  # the assignment statements with a ``self.attr`` target (rootside.derived_stores)
        # attributes read as a value, not called (``finish = info.finalize_local``), and names ``getattr`` reads: a
        # method so read may run wherever the value goes (processes.py); those read on the method's own receiver
        # (``Thread(target=self._poll)``) apart, in self_value_names: they reach its own class's lineage alone
        value_names, self_value_names = set(), set()
        called_funcs = set()  # id of each ``recv.name`` a call is made through
        # stores into attributes and elements of attributes or elements, assignments to one such target:
        # with the calls, what the file's positional fields are read from (entries.scanned_entry_nodes)
        entry_nodes = []
        # the nodes of BINDING_NODES' types, in the walk's order, but those of a nested definition's decorators
        # (walked here, which feasibility.local_bindings never reads)
        binding_nodes = []
        binding_types = BINDING_NODES
        binds_computed_names = False  # ``setattr(self, name, v)``, ``self.__dict__.update(...)`` (lackednames.py)
        self_name, self_calls, hands_self = self.self_name, [], False  # what it does to self (selfcalls.py)
        body = self.func.body if isinstance(self.func.body, list) else [self.func.body]
        stack = list(body)
        # The calls with arguments that each statement makes itself, for the summary walk (which would otherwise
        # walk every statement again). A marker ``(owner,)`` pushed under a statement's children comes back once
        # the whole subtree is done, and restores the enclosing owner.
        calls_by_statement: dict = {}
        bare_calls: list = []  # the calls without arguments (facts._run_refs)
        bare_by_statement: dict = {}  # id(statement) -> those of them it makes itself (SummaryWalk._calls)
        lambdas_by_statement: dict = {}
        walrus_by_statement: dict = {}
        owner = None
        statement_types, noted_types = _STATEMENT_TYPES, _NOTED_TYPES
        ctx = self.ctx
        tails = ctx.collective_tails
        Call, Name, Attribute, Store, Del, Load = ast.Call, ast.Name, ast.Attribute, ast.Store, ast.Del, ast.Load
        nested = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        Constant, keyword = ast.Constant, ast.keyword
        # a class named as a value, not called nor read an attribute of (FuncFacts.handed_classes)
        try:
            class_names = ctx._class_names  # (once per module: class_names_of)
        except AttributeError:
            class_names = class_names_of(ctx)
        class_reads, class_calls = [], []
        while stack:
            node = stack.pop()
            t = type(node)
            based = False  # reached as the object of an attribute read
            if t is Attribute and type(node.ctx) is Store:
                entry_nodes.append(node)
                value = node.value
                if type(value) is Name and value.id == self_name:
                    self_stores.add(node.attr)
                    if type(owner) is ast.Assign or type(owner) is ast.AnnAssign:
                        self_assignments.append(owner)  # (a target of its own, or a comprehension's in its value)
                else:
                    foreign_stores.add(held_store(value, node.attr))
            # the commonest nodes first: no statement, nothing to note.  An attribute or a keyword has one child
            # (``attr``/``arg`` are strings), the node the stack would hand back next: it is taken at once.
            while t is Attribute or t is keyword:
                value = node.value
                if t is Attribute and not based and node.ctx.__class__ is Load and id(node) not in called_funcs:
                    if value.__class__ is Name and value.id == self_name:
                        self_value_names.add(node.attr)
                    else:
                        value_names.add(node.attr)
                if t is Attribute and type(value) is Name and value.id == self_name:
                    may_write_field = may_write_field or type(node.ctx) is not Load  # ``self.x = ...``, ``del self.x``
                    t = None  # ``self.x`` hands nothing
                    break
                if t is Attribute and node.ctx.__class__ is not Load and value.__class__ is Name and value.id in imports:
                    module_stores.append((value.id, node.attr, node.lineno))
                based = t is Attribute
                node = value
                t = type(node)
            if t is None or t is Constant:
                continue
            if t is tuple:  # ``(owner,)``: the statement whose subtree ends here hands ownership back
                owner = node[0]
                continue
            if t in binding_types and type(owner) not in nested:  # (a nested definition owns its decorators)
                binding_nodes.append(node)
            if t in statement_types:
                stack.append((owner,))
                owner = node
                if t is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is not Name:
                    entry_nodes.append(node)
            if t is Name:
                if type(node.ctx) is Store or type(node.ctx) is Del:
                    local.add(node.id)
                    if node.id in params:
                        rebound.add(node.id)
                elif node.id == self_name and id(node) not in read_only:
                    hands_self = True  # ``self`` itself handed on, bound to another name, returned
                elif node.id in class_names and not based:
                    class_reads.append(node)
                continue
            if t is Call:
                if node.args or node.keywords:
                    calls_by_statement.setdefault(id(owner), []).append(node)
                else:
                    bare_calls.append(node)
                    bare_by_statement.setdefault(id(owner), []).append(node)
                func = node.func
                name = func.attr if type(func) is Attribute else func.id if type(func) is Name else None
                if type(func) is Attribute:
                    called_funcs.add(id(func))
                elif name == "getattr" and len(node.args) >= 2 and type(node.args[1]) is Constant \
                        and type(node.args[1].value) is str:
                    value_names.add(node.args[1].value)
                if type(func) is Name and func.id in class_names:
                    class_calls.append(func)
                elif type(func) is Name and func.id == self_name and is_classmethod(self.func):
                    self.built_own_class += (ctx.group_arguments(node),)  # ``cls(...)`` (constructiongroups.py)
                elif name in TYPE_TESTS:
                    class_calls.extend(type_tested(node))
                if type(func) is Attribute and type(func.value) is Attribute and type(func.value.value) is Name \
                        and func.value.value.id == self_name:
                    may_write_field = True  # ``self.x.update(...)``
                if name in OBJECT_READERS and type(func) is Name and reads_object_only(node):
                    read_only.add(id(node.args[0]))  # ``getattr(self, "x", None)`` reads it, hands it nowhere
                    class_calls.append(node.args[0])  # ``hasattr(Impl, "x")``: an attribute of the class read
                if name == "signal" and len(node.args) >= 2 and \
                        canonical_text(dotted(func), ctx.imports) == "signal.signal":
                    handler = self.resolve_ref(node.args[1])
                    if handler is not None:
                        self.signal_handlers.append(handler)
                if name in _NAME_BINDERS:
                    binds_computed_names = _note_bound_name(node, name, self_name, self_stores,
                                                            foreign_stores) or binds_computed_names
                elif name == "update" and type(func) is Attribute and type(func.value) is Attribute \
                        and func.value.attr == "__dict__":
                    binds_computed_names = True
                if name and type(func) is Attribute and (type(func.value) is Name and func.value.id == self_name or (
                        type(func.value) is Call and dotted(func.value.func) == "super")):
                    self_calls.append(name)
                if name:
                    names.add(name)
                    if name in ELEMENT_ADDERS and type(func) is Attribute and type(func.value) is Name:
                        element_stores.add(func.value.id)
                        if name == "append" and len(node.args) == 1 and type(node.args[0]) is ast.Tuple:
                            tuple_appended.add(func.value.id)
                    if name in LOCAL_IO_CALLS:
                        self.raises = self.local_io = True  # I/O fails on one rank's disk or network only
                    if not collective and name in tails:
                        raw = dotted(func)
                        if raw and (ctx.match_collective(node, raw, canonical_text(raw, ctx.imports))
                                    or raw.startswith("super().") and inherited_collective(self, node, raw)):
                            collective = True
            elif t not in noted_types:
                pass  # (most nodes: none of the branches below notes anything of them)
            elif t in nested:
                local.add(node.name)
                nested_definitions.append(node)
                hands_self = True
                decorated = decorated or bool(node.decorator_list)
                stack.extend(node.decorator_list)
                continue
            elif t is ast.Lambda:
                lambdas_by_statement.setdefault(id(owner), []).append(node)
                hands_self = True
                continue
            elif t is ast.Await:
                hands_self = True  # other coroutines run while it waits (a generator's consumer is its caller)
                leaves_at = _earlier_line(leaves_at, node)
            elif t is ast.Yield or t is ast.YieldFrom:
                leaves_at = _earlier_line(leaves_at, node)
            elif t is ast.Raise or t is ast.Assert:
                self.raises = True
            elif t is ast.Return:
                leaves_at = _earlier_line(leaves_at, node)
                if node.value is not None:
                    returned.append(node.value)
                else:
                    self.bare_return = True
            elif t is ast.NamedExpr:
                if type(node.target) is Name:
                    walrus_by_statement.setdefault(id(owner), []).append(node)
            elif t is ast.Subscript:
                if type(node.ctx) is not Load and type(node.value) is not Name:
                    entry_nodes.append(node)
                    if type(node.value) is Attribute:
                        may_write_field = True  # ``self.x[k] = ...`` (any attribute's element, as writes_no_field reads it)
                if type(node.value) is Name and type(node.slice) is ast.Constant:
                    keyed = dict_keys if type(node.slice.value) is str else position_reads
                    keyed.setdefault(node.value.id, set()).add(node.slice.value)
                if type(node.value) is Name and type(node.ctx) is Store and type(node.slice) is not ast.Slice:
                    element_stores.add(node.value.id)
                    index_stores.append(node)
            elif (t is ast.Assign or t is ast.AnnAssign) and (built_comprehension(node.value) or split_sizes(node.value)):
                element_stores.update(_comprehension_bound(node))  # own structure kept apart: Transfer.assign
            elif t is ast.Assign and (type(node.value) is ast.Subscript or any(type(x) is not Name for x in node.targets)):
                iteration_targets.update(name for target in node.targets for name in target_names(target))
                element_stores.update(_comprehension_bound(node) if constant_key_read(node.value) else ())  # Transfer.assign
                if type(node.value) is Name and len(node.targets) == 1 and type(node.targets[0]) in _UNPACKINGS:
                    tuple_unpacked.add(node.value.id)  # a local tuple saved and unpacked (tuplelists.tuple_locals)
                if type(node.value) is Name or type(node.value) is Attribute:
                    attach_candidates.append(node)
                if self_name and rebuild_candidate(node, self_name, params):
                    rebuild_candidates.append(node)
            elif t is ast.For or t is ast.AsyncFor:  # ``for k in d: d[k] = v`` keeps d's keys
                iteration_targets.update(target_names(node.target))
                element_stores.update(target_names(node.target) if loop_values_name(node) else ())  # Transfer.loop_target
                stores, drawn_at_entry = existing_key_stores_of(node)
                existing_key_stores.update(stores)
                if drawn_at_entry:
                    entry_drawn_loops.add(id(node))
            elif t is ast.comprehension:
                iteration_targets.update(target_names(node.target))
            elif t is ast.ExceptHandler:
                if node.name:
                    local.add(node.name)
            elif t is ast.Global:
                declared_globals.update(node.names)
                declared_shared.update(node.names)
            elif t is ast.Nonlocal:
                declared_shared.update(node.names)
            elif t is ast.Import or t is ast.ImportFrom:
                local.update(imported_names(node))
                continue
            stack += read(node) if (read := CHILDREN[t]) is not None else ()  # (children_into, a call fewer)
        if not collective and imports_a_wrapper(ctx) and wrapped_models(self)[0]:
            collective = any(match_call(self, node, dotted(node.func), None) is not None
                             for node in own_nodes(self.func) if isinstance(node, ast.Call))
        # (with the locals known, a call of one is resolved: classargs.chosen_class_call_ref reads its bindings)
        self._local, self._binding_nodes = local, binding_nodes
        self.declared_globals, self.module_stores, self.leaves_at = declared_globals, module_stores, leaves_at
        self.declared_shared, self.nested_definitions = frozenset(declared_shared), tuple(nested_definitions)
        if class_reads:
            self.handed_classes = handed_classes(class_names, class_reads, class_calls)
        self.rebound_params = frozenset(rebound)
        self.callee_names = frozenset(names)
        self.returned_values = returned
        self.calls_by_statement = calls_by_statement
        self.bare_calls = bare_calls
        self.bare_by_statement = bare_by_statement
        self.lambdas_by_statement = lambdas_by_statement
        self.walrus_by_statement = walrus_by_statement
        self.dict_keys, self.position_reads = dict_keys, position_reads
        self.element_stores = frozenset(element_stores)
        self.tuple_appended = frozenset(tuple_appended)
        self.tuple_unpacked = frozenset(tuple_unpacked)
        self.existing_key_stores = frozenset(existing_key_stores.union(list_index_stores(self, index_stores)))
        self.entry_drawn_loops = frozenset(entry_drawn_loops)
        self.iteration_targets = frozenset(iteration_targets)
        self.self_calls, self.hands_self = tuple(dict.fromkeys(self_calls)), hands_self
        self.may_write_field = may_write_field if not decorated else (None if may_write_field else False)
        self.attach_candidates = attach_candidates
        self.rebuild_candidates = rebuild_candidates
        self.rebuild_fields = frozenset(node.targets[0].attr for node in rebuild_candidates) \
            if rebuild_candidates else NO_NAMES
        self._rebuilds = None
        self.self_stores, self.foreign_stores = frozenset(self_stores), frozenset(foreign_stores)
        self.self_assignments = self_assignments
        self.binds_computed_names = binds_computed_names
        self.entry_nodes = entry_nodes
        self.value_names, self.self_value_names = frozenset(value_names), frozenset(self_value_names)
        return CallScan(frozenset(names), collective)


def _comprehension_bound(node) -> list:
    """The names an assignment of a list comprehension (or ``tuple(...)`` of a generator) binds (their own structure
    is the comprehension's generators', kept apart from its elements: :meth:`~cslint.analysis.transfer.Transfer.assign`)."""
    return [t.id for t in (node.targets if type(node) is ast.Assign else (node.target,)) if type(t) is ast.Name]


def _note_bound_name(call: ast.Call, name: str, self_name, self_stores: set, foreign_stores: set) -> bool:
    """Note the attribute name a call of :data:`_NAME_BINDERS` binds (``setattr(obj, "x", v)``,
    ``obj.register_buffer("x", t)``) with the stores on ``self`` or on another object; whether it binds a
    name it computes on ``self``."""
    receiver_at, name_at = _NAME_BINDERS[name]
    args = call.args
    if receiver_at is None:
        if type(call.func) is not ast.Attribute:
            return False
        receiver = call.func.value
    elif len(args) > receiver_at:
        receiver = args[receiver_at]
    else:
        return False
    key = args[name_at] if len(args) > name_at else next((kw.value for kw in call.keywords if kw.arg == "name"), None)
    on_self = type(receiver) is ast.Name and receiver.id == self_name
    if type(key) is ast.Constant and type(key.value) is str:
        if on_self:
            self_stores.add(key.value)
        else:
            foreign_stores.add(held_store(receiver, key.value))
        return False
    return on_self


def held_store(receiver: ast.AST, name: str) -> str:
    """How a store of the attribute ``name`` on ``receiver`` (not a method's ``self``) is noted in
    :attr:`FunctionInfo.foreign_stores`: ``"F.name"`` on what a field ``F`` holds (``x.F.name = v``),
    ``"name"`` on any other object (a local, a parameter, an element)."""
    return f"{receiver.attr}.{name}" if type(receiver) is ast.Attribute else name


def _earlier_line(line, node: ast.AST):
    """The earlier of ``line`` (None: none yet) and ``node``'s line."""
    return node.lineno if line is None or node.lineno < line else line
