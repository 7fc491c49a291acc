"""What one function body says before any value is computed: its parameters
and receiver, the names it binds, the calls each statement makes, the modes
its tests name, and where a callee expression leads (a typed reference that
the whole-tree pass resolves).

One cheap walk (``FunctionInfo.scan_calls``, from :class:`~cslint.analysis.functionscan.FunctionScan`) notes all of
it for the summary walk, the dataflow and the guards.
"""

from __future__ import annotations

import ast
from typing import NamedTuple, Optional

from ..config import matches_any
from ..presets import KIND_FORWARD_INPUT, KIND_GATHERED_DATA, KIND_RANK_ID, KIND_STEP_BATCH, fnmatch_any
from ..presets.rank_names import rank_name_dims
from . import cfg as cfgmod
from .astwalk import (
    BLOCKS_OF, DEFINITIONS, children_into, imported_names, own_nodes, param_names, positional_parameters,
    walk as fast_walk,
    walked,
)
from .callfacts import payload_argument
from .classargs import chosen_class_call_ref, parameter_call_ref
from .classreads import NO_NAMES
from .funcaliases import probed_text
from .functionscan import FunctionScan
from .atoms import EMPTY, param_atoms, source
from .callrefs import (
    class_ref, field_method_ref, func_ref, is_staticmethod, method_ref, name_ref, qual_ref, receiver_param, super_ref,
    typed_method_ref,
)
from .logs import quiet_calls
from .managed import context_calls, context_method_ref
from .receivers import ReceiverTypes, is_library
from .scope import ModuleContext, canonical_text
from .positions import entry_positions
from .bindings import params_that_may_be_none
from .syntax import CONTEXT_METHODS, annotation_text, calls_in_order, dotted
from .vocabulary import GENERIC_METHODS
from .wrappers import WRAPPED_FORWARD, imports_a_wrapper, match_call, wrapped_models


class CallInfo(NamedTuple):
    """A call evaluated at a CFG node, with the inline conditions guarding it
    (ternaries, short-circuits, comprehensions) and its collective match."""

    call: ast.Call
    inline: list  # [(kind, condition, owner node, side)]
    raw: Optional[str]  # the callee's dotted text
    canonical: Optional[str]  # the same through the imports
    match: Optional[object]  # CollectiveMatch


class NodeInfo(NamedTuple):
    """What a CFG node evaluates itself (not its nested blocks)."""

    exprs: list
    calls: list  # [CallInfo]
    walrus: list  # [ast.NamedExpr] with a plain name target


def rank_param_sources(info) -> tuple:
    """``((index, Source), ...)``: a rank-id source for each parameter
    named like this process's rank (``rank``, ``tp_rank``), unless it may
    be None (a None default or an optional annotation):
    ``def allreduce_bucket(..., rank=None)`` takes an optional rank the
    caller picks (a destination), ``def scale(..., rank: int | None)`` a
    setting that may be unset (a LoRA rank); what they hold is what the
    callers pass, not this process's own rank, which is never None.  Only
    the name says so: where the tree calls the function, what the callers
    pass decides (:class:`~cslint.analysis.program.Program`).

    Kept on ``info``: the entry variables and the function's facts both
    ask, and the same atoms in both are pickled once."""
    found = info._rank_params
    if found is not None:
        return found
    ctx = info.ctx
    out = []
    optional = None  # parsed from the signature once a parameter is named like a rank
    for index, clean in info.passed_params:
        dims = rank_name_dims(clean)
        if dims is None:
            continue
        if optional is None:
            optional = params_that_may_be_none(info.func)
        if clean not in optional and not (ctx.settings.uniform and matches_any(clean, ctx.settings.uniform)):
            out.append((index, source(KIND_RANK_ID, clean, ctx.path, getattr(info.func, "lineno", 0),
                                      (("*", dims),))))
    found = info._rank_params = tuple(out)
    return found


def enclosing_params(info) -> dict:
    """Name -> atoms: what a nested function reads of its enclosing
    functions' parameters (its free variables; the nearest function binding
    the name holds it, and a name the nested function binds itself is its
    own): the rank-id source :func:`rank_param_sources` gives such a
    parameter named like a rank, the same atom, so the whole-tree pass drops
    it wherever a call reaches the enclosing function and what its callers
    pass decides (a helper's ``rank`` handed on to a closure that builds a
    workspace with it), else nothing -- never a source by the name alone,
    nor a module global the parameter shadows."""
    out: dict = {}
    shadow = info.local_names
    outer = info.enclosing
    while outer is not None:
        named = dict(rank_param_sources(outer))
        for index, clean in outer.passed_params:
            if clean in shadow or clean in out:
                continue
            out[clean] = frozenset({named[index]}) if index in named else EMPTY
        shadow = shadow | outer.local_names
        outer = outer.enclosing
    return out


def free_names(info) -> frozenset:
    """The names a nested function may read that an enclosing function binds (a parameter, the enclosing
    method's ``self`` included, or a local name) and that it does not bind itself: what they hold is the
    enclosing call's, which only a call from inside that scope shares (``FuncFacts.free_names``); empty for a
    function defined at a module's or a class's top level."""
    outer = info.enclosing
    if outer is None:
        return frozenset()
    own = info.param_names | info.local_names
    out = set()
    while outer is not None:
        out |= outer.param_names
        out |= outer.local_names
        outer = outer.enclosing
    return frozenset(out - own)


def imported_text(info, text: str) -> Optional[str]:
    """``text`` spelt from the module its first name is imported from (``dist.group.WORLD`` under ``import
    torch.distributed as dist``: ``torch.distributed.group.WORLD``), where the function ``info`` reads that name
    from an import of the file; None where nothing imports it, or where what the function reads by it is another
    object: a parameter or a local bound otherwise than by an import, of the function or of one it is nested in
    (``def step(x, group)``: ``group.WORLD`` is a field of what the caller hands), or a module-level assignment."""
    head = text.partition(".")[0].partition("(")[0]  # (``_get_default_group()``: the name called)
    ctx = info.ctx
    if head not in ctx.imports or head in ctx.module_globals:
        return None
    scope = info
    while scope is not None:
        if head in param_names(scope.func) or head in scope.local_names and not _imports_locally(scope.func, head):
            return None
        scope = scope.enclosing
    return canonical_text(head, ctx.imports) + text[len(head):]


def _imports_locally(func: ast.AST, name: str) -> bool:
    return any(type(node) in (ast.Import, ast.ImportFrom) and name in imported_names(node) for node in own_nodes(func))


def step_batch_param(info) -> Optional[int]:
    """The index of the parameter that holds this rank's own batch, when
    the function is a step hook a framework calls with it
    (:attr:`~cslint.presets.Preset.batch_hooks`: a ``LightningModule``'s
    ``training_step(self, batch, ...)``); else None."""
    hooks = info.ctx.knowledge.batch_hooks
    if not hooks or not info.self_name or len(info.params) < 2 or info.params[1].startswith("*"):
        return None
    name = info.qualname.rsplit(".", 1)[-1]
    bases = info.ctx.class_bases.get(info.class_key, ())
    for pattern, methods in hooks:
        if name in methods and any(fnmatch_any(base, (pattern,)) for base in bases):
            return 1
    return None


def gathered_params(info) -> dict:
    """Parameter name -> (line, group, kind) for each parameter whose value
    this function passes, directly or through its own locals, as its
    contribution to a gather of per-process data (``payload_local``
    collectives: a data-parallel framework's ``gather``/``gather_object``),
    or as input to a module wrapped for data parallelism (its forward runs
    on each rank's own batch).  Such a gather exists because what each rank
    passes differs -- its own batch's outputs --, and data parallelism
    exists because each rank forwards its own batch: the parameter is this
    rank's data."""
    if info._gathered is not None:
        return info._gathered
    ctx = info.ctx
    forwards = imports_a_wrapper(ctx) and bool(wrapped_models(info)[0])
    if not forwards and not info.callee_names & ctx.knowledge.payload_local_names:
        info._gathered = {}
        return info._gathered  # calls no such gather: no second walk of the body
    tails = ctx.collective_tails
    seeds: dict = {}  # local name -> (line, group)
    assigned: dict = {}  # local name -> [(line, names an assigned value reads)]
    # names handed as they are to a wrapped module's forward: only the
    # batch itself, not what it was computed from (a dummy input built from
    # the model's own dtype and device is not the model's data)
    inputs: dict = {}
    body = info.func.body if isinstance(info.func.body, list) else [info.func.body]
    stack = list(body)
    while stack:
        node = stack.pop()
        if type(node) in DEFINITIONS:
            continue
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name, value in _plain_bindings(target, node.value):
                    assigned.setdefault(name, []).append((node.lineno, _data_names(value)))
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) \
                else None
            if name in tails:
                raw = dotted(func)
                match = ctx.match_collective(node, raw, canonical_text(raw, ctx.imports)) if raw else None
                if match is not None and match.spec is not None and match.spec.payload_local:
                    payload = payload_argument(node, match.spec)
                    if payload is not None:
                        for name in sorted(_data_names(payload)):
                            seeds.setdefault(name, (node.lineno, match.group, KIND_GATHERED_DATA))
            elif forwards:
                raw = dotted(func)
                match = match_call(info, node, raw, None) if raw else None
                if match is not None and match.spec is WRAPPED_FORWARD:
                    for arg in [*node.args, *(keyword.value for keyword in node.keywords)]:
                        if isinstance(arg, ast.Name):
                            inputs.setdefault(arg.id, (node.lineno, match.group, KIND_FORWARD_INPUT))
        children_into(node, stack)
    # what the payload was computed from, back through the function's own
    # assignments written above the use (a later reassignment is not an origin)
    reached = dict(seeds)
    limit = {name: where[0] for name, where in seeds.items()}
    work = sorted(seeds)
    while work:
        name = work.pop()
        for line, origins in assigned.get(name, ()):
            if line >= limit[name]:
                continue
            for origin in sorted(origins):
                if limit.get(origin, -1) < line:
                    reached.setdefault(origin, reached[name])
                    limit[origin] = line
                    work.append(origin)
    for name, where in inputs.items():
        reached.setdefault(name, where)
    params = info.param_names - {info.self_name}
    info._gathered = {name: where for name, where in reached.items() if name in params}
    return info._gathered


def _plain_bindings(target: ast.AST, value: ast.AST) -> list:
    """(name, value) pairs an assignment binds, element by element where a
    tuple is unpacked from a tuple; an unpacked call result binds nothing
    here (which of its parts came from which argument is unknown)."""
    if isinstance(target, ast.Name):
        return [(target.id, value)]
    if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) \
            and len(target.elts) == len(value.elts):
        out = []
        for sub, part in zip(target.elts, value.elts):
            out.extend(_plain_bindings(sub, part))
        return out
    return []


def _data_names(expr: ast.AST) -> set:
    """The names whose values an expression computes with: not the ones it
    only calls (``model(**batch)`` computes with ``batch``, not ``model``)."""
    called = {id(node.func) for node in walked(expr) if isinstance(node, ast.Call)}
    return {node.id for node in walked(expr) if isinstance(node, ast.Name) and id(node) not in called}


def index_parents(body: list) -> tuple:
    """(id(statement) -> the statement holding it (None at the top), id(statement) -> the block it is in)."""
    parents, blocks = {}, {}
    for stmt in body:
        blocks[id(stmt)] = body
        parents[id(stmt)] = None
    stack = list(body)
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef or kind is ast.ClassDef:
            continue
        for name in BLOCKS_OF[kind]:
            block = getattr(node, name, None) or []
            for child in block:
                key = id(child)
                parents[key] = node  # (noted as the statement holding it is taken, not as it is)
                blocks[key] = block
            stack += block
    return parents, blocks


class FunctionInfo(FunctionScan):
    """The static facts of one function body (or of the module body)."""

    def __init__(self, ctx: ModuleContext, func: ast.AST, qualname: str, class_key: Optional[str],
                 is_method: bool, local_defs: dict):
        self.ctx = ctx
        self.func = func
        self.qualname = qualname
        self.class_key = class_key
        self.local_defs = local_defs  # nested function name -> qualname
        self.enclosing = None  # the function a nested one is defined in (facts._walk_defs)
        #: ``@line`` for a module-level definition of a name another definition in a block shares, and the
        #: functions nested in it (facts.alternative_definitions): its key apart, its qualified name the same
        self.key_suffix = ""
        #: a nested function: what it reads of the enclosing functions' locals on entry
        #: (closedover.closed_over_entry, set by facts._walk_defs: a later phase than this one)
        self.closure_entry = None
        self.handed_classes = NO_NAMES  # the classes it reads as a value (scan_calls)
        self.rebuild_candidates: list = []  # ``self.attr = local`` or ``= call(...)`` (scan_calls; rebuilds.py)
        self.rebuild_fields = NO_NAMES  # their fields' names (scan_calls)
        self._rebuilds = None  # rebuilds.rebuilds_of, once asked
        self.self_stores = self.foreign_stores = NO_NAMES  # attribute names stored by name (scan_calls)
        self.self_assignments = None  # the assignments storing into ``self.attr`` (scan_calls), None before it
        self.binds_computed_names = False  # on ``self`` (scan_calls; lackednames.py)
        self.built_own_class = ()  # a classmethod: the group arguments of each ``cls(...)`` (scan_calls)
        args = getattr(func, "args", None)
        params = []
        if args is not None:
            positional = positional_parameters(args)
            params = [a.arg for a in positional]
            if args.vararg:
                params.append("*" + args.vararg.arg)
            params += [a.arg for a in args.kwonlyargs]
            if args.kwarg:
                params.append("**" + args.kwarg.arg)
        self.params = tuple(params)
        self.arity = call_arity(args)  # FuncFacts.arity: which calls can bind its parameters
        self.self_name = receiver_param(func) if is_method else None  # ``self``, or a classmethod's ``cls``
        #: 1 where a call through an object passes it first (into ``*args`` too, unnamed there)
        self.self_offset = 1 if self.self_name is not None or (
            is_method and params and not is_staticmethod(func)) else 0
        #: ``@contextmanager``: its ``yield`` value is what ``with f() as v`` binds
        self.is_context_manager = any(
            (dotted(d) or "").rsplit(".", 1)[-1] in ("contextmanager", "asynccontextmanager")
            for d in getattr(func, "decorator_list", ()))
        self.annotations = {}
        if args is not None:
            for a in positional + args.kwonlyargs:  # (parameters(), written out: every function)
                if a.annotation is not None:
                    text = annotation_text(a.annotation)
                    if text:
                        self.annotations[a.arg] = text
        self._node_infos: dict = {}
        self._param_names = self._passed_params = None  # see param_names, passed_params
        self._parents = None
        self._blocks: dict = {}
        self._local = self._receivers = None
        self._refs: dict = {}  # id(callee expression) -> (it, resolve_ref's answer)
        self._gathered = self._wrapped = None  # gathered_params(), wrapped_models()
        self._rank_params = None  # rank_param_sources()
        self.held_in_place = None  # parameter name -> positions.picks_in_place(), made when asked
        #: what correlated.py found of its own names (bound once, declared, scalar; names of a test), made when asked
        self.name_facts: dict = {}
        self.callee_names: frozenset = frozenset()  # the last name of every callee (scan_calls)
        # noted by scan_calls
        self.raises = self.local_io = False
        self.signal_handlers: list = []
        self.may_write_field = None  # whether a node of its own writes a field of self (None: unknown; writes_no_field)
        self.returned_values: list = []  # the values of its ``return`` statements
        self.bare_return = False  # some ``return`` gives no value
        self.calls_by_statement: dict = {}  # id(statement) -> [call with arguments]
        self.bare_calls: list = []  # the calls without arguments it makes itself (lambdas aside)
        self.bare_by_statement: dict = {}  # id(statement) -> those of them the statement makes itself
        self.lambdas_by_statement: dict = {}  # id(statement) -> [lambda]
        self.walrus_by_statement: dict = {}  # id(statement) -> [``name := value``]
        # Local dicts read with constant keys (``state["step"]``): name -> keys. The dataflow keeps one entry per
        # such key, ``("key", name, k)``, so ``{"rank": get_rank(), "step": 0}["step"]`` stays uniform. Names
        # indexed with other constants: name -> those (positions.read_positions).
        self.dict_keys, self.position_reads = {}, {}
        self.element_stores: frozenset = frozenset()  # local containers stored into: see Flow.write
        self.tuple_appended: frozenset = frozenset()  # names a tuple written out is appended to (tuplelists.py)
        self.tuple_unpacked: frozenset = frozenset()  # names an assignment unpacks (tuplelists.tuple_locals)
        self.own_params: set = set()  # the parameters whose own part it reads (StructureReads.params_own)
        self.existing_key_stores: frozenset = frozenset()  # id() of stores under a drawn key: see syntax
        self.entry_drawn_loops: frozenset = frozenset()  # id() of loops that draw what d held on entry
        self.iteration_targets: frozenset = frozenset()  # names bound to an element: loop targets, xs[i], unpacking

    @property
    def key(self) -> str:
        return f"{self.ctx.module}:{self.qualname}{self.key_suffix}"

    @property
    def line(self) -> int:
        return getattr(self.func, "lineno", 1)

    @property
    def body(self) -> list:
        return self.func.body if isinstance(self.func.body, list) else []

    @property
    def param_names(self) -> frozenset:
        """The names of its parameters, ``*args`` and ``**kwargs`` by their
        bare names (``params`` spells them with their stars): every name a
        call binds on entry."""
        names = self._param_names
        if names is None:
            names = self._param_names = frozenset([name.lstrip("*") for name in self.params])
        return names

    @property
    def passed_params(self) -> tuple:
        """``((index, bare name), ...)`` of the parameters a call passes
        values to, in order: those of ``params`` past the receiver
        (``self_name``: what the call is made through)."""
        found = self._passed_params
        if found is None:
            skip = 1 if self.self_name else 0  # (a list, not a generator resumed per parameter)
            found = self._passed_params = tuple([
                (index, name.lstrip("*")) for index, name in enumerate(self.params) if index >= skip])
        return found

    # parent links and local names are built on first use: most functions of
    # a file are never analysed in depth
    @property
    def parents(self) -> dict:
        if self._parents is None:
            self._parents, self._blocks = index_parents(self.body)
        return self._parents

    @property
    def blocks(self) -> dict:
        self.parents  # noqa: B018 - builds both
        return self._blocks

    @property
    def cfg_quiet(self):
        """The CFG's ``quiet`` test of this function (:func:`~cslint.analysis.logs.quiet_calls`)."""
        return quiet_calls(self)

    def ensure_scanned(self) -> None:
        """Run :meth:`scan_calls` where it has not run: what it notes
        (``functionscan.SCANNED``) is read off this function after."""
        if self._local is None:
            self.scan_calls()

    # (read very often: each checks the scan itself, a call fewer than through ensure_scanned)
    @property
    def local_names(self) -> set:
        if self._local is None:
            self.scan_calls()  # notes the local names
        return self._local

    @property
    def binding_nodes(self) -> list:
        """The nodes of the body that bind a local name or test one
        (``functionscan.BINDING_NODES``), in the order of the call scan's walk."""
        if self._local is None:
            self.scan_calls()  # notes them with the local names
        return self._binding_nodes

    def binds_in_expressions(self) -> bool:
        """Whether an expression of the body may bind a local name (``name := value``).  Known once
        :meth:`scan_calls` has run, which notes every walrus; before that, it may."""
        return self._local is None or bool(self.walrus_by_statement)

    def inside(self, stmt: Optional[ast.AST], owner: ast.AST) -> bool:
        while stmt is not None:
            if stmt is owner:
                return True
            stmt = self.parents.get(id(stmt))
        return False

    def enclosing_try(self, stmt):
        parent = self.parents.get(id(stmt))
        while parent is not None:
            if isinstance(parent, ast.Try) or type(parent).__name__ == "TryStar":
                return parent
            parent = self.parents.get(id(parent))
        return None

    def normalise_self(self, text: str) -> str:
        if self.self_name and self.self_name != "self":
            if text == self.self_name or text.startswith(self.self_name + "."):
                return "self" + text[len(self.self_name):]
        return text

    def node_info(self, node: cfgmod.Node) -> NodeInfo:
        """The expressions a CFG node evaluates, its calls (with their collective match) and walruses; once."""
        key = (id(node.stmt), node.kind)
        info = self._node_infos.get(key)
        if info is None:
            exprs = own_exprs(node)
            calls = []
            walrus = []
            ctx = self.ctx
            for expr in exprs:
                for call, inline in calls_in_order(expr):
                    raw = dotted(call.func)
                    canon = canonical_text(raw, ctx.imports) if raw else None
                    match = match_call(self, call, raw, canon)
                    if type(call.func) is ast.Name and (probed := probed_text(self, call.func)):
                        raw, canon = probed, canonical_text(probed, ctx.imports)  # a probed module function
                    calls.append(CallInfo(call, inline, raw, canon, match))
                if ctx.may_hold_walrus:  # most files have none: no second walk of the expression
                    for sub in walked(expr):
                        if type(sub) is ast.NamedExpr and type(sub.target) is ast.Name:
                            walrus.append(sub)
            info = NodeInfo(exprs, calls, walrus)
            self._node_infos[key] = info
        return info

    def context_calls(self, node: cfgmod.Node) -> list:
        """The ``X(...).__enter__()`` and ``X(...).__exit__()`` calls a ``with`` statement's node makes beside its
        own (:func:`~cslint.analysis.managed.context_calls`): call sites alone, no local work of the statement."""
        if node.kind != cfgmod.STMT or (type(node.stmt) is not ast.With and type(node.stmt) is not ast.AsyncWith):
            return []
        key = (id(node.stmt), "with")
        found = self._node_infos.get(key)
        if found is None:
            found = self._node_infos[key] = [CallInfo(call, [], None, None, None) for call in context_calls(node.stmt)]
        return found

    # -- values at entry and references ---------------------------------------------
    def entry_env(self) -> dict:
        """Parameter name -> atoms: the parameter itself, the rank-id source of :func:`rank_param_sources` for a
        parameter named like one, and the gathered-data source of a parameter handed to a gather of per-process data
        (:func:`gathered_params`); :func:`enclosing_params` for a closure."""
        env = {} if self.enclosing is None else enclosing_params(self)
        if self.closure_entry is not None:
            env.update(self.closure_entry(self))
        ctx = self.ctx
        named = dict(rank_param_sources(self))
        gathered = gathered_params(self) if ctx.knowledge.has_payload_local or imports_a_wrapper(ctx) else {}
        batch_index = step_batch_param(self)
        for index, clean in self.passed_params:
            atoms = param_atoms(index)
            if index in named:
                atoms |= {named[index]}
            if clean in gathered:
                atoms |= {source(gathered[clean][2], clean, ctx.path, gathered[clean][0],
                                 (("*", ctx.knowledge.world.span(gathered[clean][1])),), whole=True)}
            if index == batch_index:
                atoms |= {source(KIND_STEP_BATCH, clean, ctx.path, getattr(self.func, "lineno", 0),
                                 (("*", ctx.knowledge.world.span("world")),), whole=True)}
            env[clean] = atoms
        entry_positions(self, env)
        return env

    def self_attr(self, node: ast.AST) -> Optional[str]:
        """``attr`` when ``node`` is ``self.attr`` in a method."""
        if type(node) is ast.Attribute and type(node.value) is ast.Name and self.self_name \
                and node.value.id == self.self_name and self.class_key:
            return node.attr
        return None

    def resolve_ref(self, func: ast.AST) -> Optional[tuple]:
        """The typed reference a callee expression leads to, or None for a call nothing in the tree can be (a
        builtin, a generic method name).  Kept per expression: the summary walk, the dataflow (once per pass over
        a statement) and the guards all ask about the same calls."""
        refs, key = self._refs, id(func)
        if key in refs:  # (``in`` and a subscript, not a call of get: most callees were asked about before)
            known = refs[key]
            if known[0] is func:
                return known[1]
        found = self._resolve_ref(func)
        refs[key] = (func, found)
        return found

    def _resolve_ref(self, func: ast.AST) -> Optional[tuple]:
        ctx = self.ctx
        if type(func) is ast.Name:
            name = func.id
            if name in self.local_defs:
                return func_ref(ctx.module, self.local_defs[name])
            if name in self.params:
                # (a parameter hides a module's function or class of its name: what the callers hand in runs)
                return parameter_call_ref(self, name)  # a class the callers may hand in (classargs.py)
            if name in ctx.module_functions or name in ctx.block_functions and name not in ctx.imports:
                return func_ref(ctx.module, name)
            if name in ctx.module_classes:
                return class_ref(f"{ctx.module}:{name}")
            if name in ctx.imports:
                return qual_ref(ctx.imports[name])
            # (a builtin or global name is no local; the scan that notes the locals resolves a signal
            # handler, no call, before they are known)
            if self._local is not None and name in self._local:
                return chosen_class_call_ref(self, name)  # a class a local is bound to (classargs.py)
            return None
        if type(func) is ast.Attribute:
            value = func.value
            if type(value) is ast.Name and self.self_name and value.id == self.self_name and self.class_key:
                return method_ref(self.class_key, func.attr)
            if type(value) is ast.Call and type(value.func) is ast.Name and value.func.id == "super" \
                    and self.class_key:
                return super_ref(self.class_key, func.attr)
            if type(value) is ast.Call and func.attr in CONTEXT_METHODS:
                return context_method_ref(self.resolve_ref(value.func), func.attr)
            attr = self.self_attr(value)
            if attr is not None:
                return field_method_ref(self.class_key, attr, func.attr, receiver_types(self).call_shape(value))
            text = dotted(value)
            if text and "()" not in text:
                head = text.split(".")[0]
                if head in ctx.imports:
                    return qual_ref(canonical_text(text, ctx.imports) + "." + func.attr)
                if head in ctx.module_classes and "." not in text:
                    return qual_ref(f"{ctx.module}.{text}.{func.attr}")
            return receiver_ref(self, value, func.attr)
        return None

def receiver_types(info: FunctionInfo) -> ReceiverTypes:
    """The function's :class:`ReceiverTypes`, made on first use."""
    if info._receivers is None:
        info._receivers = ReceiverTypes(info)
    return info._receivers


def receiver_ref(info: FunctionInfo, receiver: ast.AST, name: str) -> Optional[tuple]:
    """``receiver.name()`` on a receiver that is neither ``self`` nor an import: typed by what the function
    shows of the receiver, else by the name alone (which the whole-tree pass follows only when one method in
    the tree has it, and the call's arguments bind it).  A standard-library receiver is never a project class."""
    if name.startswith("__") and name not in CONTEXT_METHODS:
        return None
    receivers = receiver_types(info)
    terms = receivers.terms(receiver)
    if name in CONTEXT_METHODS and not terms:
        return None  # ``g.__exit__()`` is followed only where the function shows what ``g`` is (managed.py)
    if terms:
        return None if is_library(terms) else typed_method_ref(name, terms, receivers.call_shape(receiver))
    return None if name in GENERIC_METHODS else name_ref(name, receivers.call_shape(receiver))


def call_arity(args) -> tuple:
    """``FuncFacts.arity`` of a definition's arguments (() for the module body)."""
    if args is None:
        return ()
    positional = len(args.posonlyargs) + len(args.args)
    return (positional, len(args.posonlyargs), positional - len(args.defaults),
            tuple(a.arg for a, default in zip(args.kwonlyargs, args.kw_defaults) if default is None))


def own_exprs(node: cfgmod.Node) -> list:
    """The expressions evaluated *at* a CFG node (not in nested bodies)."""
    s = node.stmt
    if s is None:
        return []
    kind = node.kind
    t = type(s)  # (the parser makes no subclasses of node types)
    if kind in (cfgmod.TEST,) and t is ast.If:
        return [s.test]
    if kind == cfgmod.LOOP:
        if t is ast.While:
            return [s.test]
        return [s.iter]
    if kind == cfgmod.ASSERT:
        return [s.test] + ([s.msg] if s.msg is not None else [])
    if kind == cfgmod.EXCEPT:
        return [s.type] if s.type is not None else []
    if kind == cfgmod.CASE:
        out = []
        if s.guard is not None:
            out.append(s.guard)
        return out
    if t is ast.With or t is ast.AsyncWith:
        return [item.context_expr for item in s.items]
    if t is ast.Match:
        return [s.subject]
    if t is ast.FunctionDef or t is ast.AsyncFunctionDef:
        return list(s.decorator_list) + list(s.args.defaults) + [d for d in s.args.kw_defaults if d is not None]
    if t is ast.ClassDef:
        return list(s.decorator_list) + list(s.bases)
    return [s]


def mode_names_used(info: FunctionInfo) -> bool:
    """Whether the function (a module: its own statements) names the tail of a mode predicate."""
    modes = info.ctx.knowledge.modes
    if not modes:
        return False
    tails = {p.rsplit(".", 1)[-1] for m in modes for p in m.predicates}
    func = info.func
    nodes = fast_walk(func) if not isinstance(func, ast.Module) else (
        node for stmt in func.body if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        for node in fast_walk(stmt))
    for node in nodes:
        if isinstance(node, ast.Attribute) and node.attr in tails:
            return True
        if isinstance(node, ast.Name) and node.id in tails:
            return True
    return False


def mode_predicate_value(info: FunctionInfo, test, specs, modes) -> Optional[bool]:
    """Whether the mode ``test`` (in ``info``'s function) names is on (``modes``), when ``test`` is one of the
    mode predicates of ``specs``; None for any other test."""
    text = dotted(test)
    if text is None:
        return None
    text = info.normalise_self(text)
    for spec in specs:
        if fnmatch_any(text, spec.predicates):
            return spec.name in modes
    return None
