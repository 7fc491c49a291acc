"""Per-file facts computed from the AST alone.

Everything here is plain picklable data so files can be analysed in worker
processes and cached by content hash.  Values are described *symbolically*:
the divergence of an expression is a frozenset of typed atoms
(:mod:`cslint.analysis.atoms`), resolved by ``program.py`` once the whole
tree is known.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field
from typing import NamedTuple, Optional

from ..config import Settings, matches_any
from ..model import Span
from ..presets import ALL_DIMS, Knowledge, fnmatch_any, group_from_text, rank_name_dims, size_name_is_uniform
from . import cfg as cfgmod
from .astwalk import children_into, iter_children, walk as fast_walk
from .atoms import (
    EMPTY, AtomBuilder, class_ref, field_method_ref, field_read, func_ref, global_read, method_ref, name_ref,
    param, qual_ref, raised_by, source, super_ref,
)
from .callfacts import collective_facts, wrapper_facts

_ALL = (("*", ALL_DIMS),)

# Environment variables launchers set per process.
RANK_ENV_VARS = {
    "RANK": ALL_DIMS, "LOCAL_RANK": ALL_DIMS, "GROUP_RANK": ALL_DIMS, "NODE_RANK": ALL_DIMS,
    "OMPI_COMM_WORLD_RANK": ALL_DIMS, "OMPI_COMM_WORLD_LOCAL_RANK": ALL_DIMS, "PMI_RANK": ALL_DIMS,
    "PMIX_RANK": ALL_DIMS, "SLURM_PROCID": ALL_DIMS, "SLURM_LOCALID": ALL_DIMS, "SLURM_NODEID": ALL_DIMS,
    "MV2_COMM_WORLD_RANK": ALL_DIMS, "LOCAL_PROCESS_RANK": ALL_DIMS, "CUDA_VISIBLE_DEVICES": ALL_DIMS,
}

_SEEDED_GENERATORS = {"Random", "default_rng", "RandomState", "Generator", "SeedSequence", "manual_seed"}

# Builtins whose exceptions depend only on their arguments.
PURE_BUILTINS = {
    "int", "float", "str", "bool", "bytes", "len", "list", "dict", "tuple", "set", "frozenset", "sorted",
    "min", "max", "sum", "abs", "round", "divmod", "range", "enumerate", "zip", "isinstance", "issubclass",
    "getattr", "hasattr", "repr", "format", "any", "all", "map", "filter", "reversed", "iter", "hash",
    "type", "id", "print", "chr", "ord", "hex", "oct", "bin", "pow", "callable", "vars", "dir",
}

# Methods that change the container they are called on.
MUTATORS = {
    "append", "extend", "add", "update", "insert", "appendleft", "extendleft", "setdefault",
    "put", "put_nowait", "push", "pop", "popleft", "remove", "discard", "clear", "popitem",
}

MAX_TEXT = 120


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 3] + "..."


def unparse(node: ast.AST) -> str:
    try:
        return _short(ast.unparse(node))
    except Exception:  # pragma: no cover - exotic nodes
        return type(node).__name__


def dotted(node: ast.AST) -> Optional[str]:
    """``a.b.c`` for Name/Attribute chains (``a.b().c`` gives ``a.b().c``)."""
    parts = []
    while True:
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Name):
            parts.append(node.id)
            break
        elif isinstance(node, ast.Call):
            inner = dotted(node.func)
            if inner is None:
                return None
            parts.append(inner + "()")
            break
        else:
            return None
    return ".".join(reversed(parts))


# --------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------


@dataclass
class Cond:
    """One controlling condition of a call site."""

    kind: str  # branch | early-exit | loop | exception
    atoms: frozenset
    text: str
    line: int
    guard: Span  # the controlling statement
    exit_span: Optional[Span] = None  # early exits: the return/continue/break/raise
    exit_text: str = ""
    body_sites: tuple = ()  # for balanced-branch detection: site indices per side
    else_sites: tuple = ()
    two_sided: bool = False  # an if/else or ternary whose sides can be compared
    #: every sequence of call sites a rank may issue through this decision
    #: (both sides); None when unknown (loops with calls, too many paths)
    alternatives: Optional[tuple] = None
    statement: str = ""  # loops: the loop statement (``while``/``for``) the fixes must keep


class Collective(NamedTuple):
    """What a collective call site issues."""

    name: str  # the collective (``all_reduce``)
    group: str  # ``world``, ``tp``, ... or ``group:<expression>``
    api: str  # trtllm | torch | mpi | unknown


class CollectiveMatch(NamedTuple):
    """A call recognised as a collective, with the preset entry that matched
    (None for a collective named in ``[tool.cslint] collectives``)."""

    name: str
    group: str
    api: str
    spec: Optional[object]

    @property
    def collective(self) -> Collective:
        return Collective(self.name, self.group, self.api)


class FieldWrite(NamedTuple):
    """``self.attr = <atoms>`` at ``line`` in a method of ``class_key``."""

    class_key: Optional[str]
    attr: str
    atoms: frozenset
    line: int


class FieldType(NamedTuple):
    """``self.attr = ref(...)``: the field holds what ``ref`` constructs."""

    class_key: Optional[str]
    attr: str
    ref: tuple


@dataclass
class Site:
    """A call that is a collective or may lead to one."""

    span: Span
    callee: str
    canonical: str
    collective: Optional[Collective]
    ref: Optional[tuple]
    args: tuple
    kwargs: tuple
    conds: tuple
    line_text: str = ""
    # Implicit flow at the call: the atoms of every condition deciding whether
    # this call runs.  A callee reached only on some ranks assigns its fields
    # only on those ranks (interprocedural implicit flow).
    ctx_atoms: frozenset = frozenset()
    #: what a fix of this call needs (:class:`~cslint.analysis.callfacts.CallFacts`)
    fix: Optional[tuple] = None


@dataclass
class Variant:
    sites: list = field(default_factory=list)
    returns: frozenset = EMPTY
    fields: list = field(default_factory=list)  # [FieldWrite]
    field_types: list = field(default_factory=list)  # [FieldType]


@dataclass
class FuncFacts:
    key: str
    qualname: str
    module: str
    path: str
    line: int
    class_key: Optional[str]
    params: tuple
    self_offset: int  # 1 for methods called through an instance
    variants: dict  # frozenset(modes) or None -> Variant
    deep: bool = True  # analysed with CFG + control dependence (False: summary only)
    raises: bool = False  # contains a raise or assert statement
    called_names: frozenset = frozenset()  # last components of every callee
    # refs of functions this one installs as signal handlers (``signal.signal(sig, self.on_term)``):
    # a signal arrives at one rank, so whatever the handler sets is rank-local
    signal_handlers: tuple = ()


@dataclass
class ClassFacts:
    key: str
    name: str
    module: str
    bases: tuple  # refs
    methods: dict  # name -> function key


@dataclass
class FileFacts:
    path: str
    module: str
    functions: list = field(default_factory=list)
    classes: list = field(default_factory=list)
    globals: dict = field(default_factory=dict)  # name -> atoms
    defined_names: set = field(default_factory=set)  # function / method names
    collective_functions: set = field(default_factory=set)  # names of functions with a direct collective
    imports: dict = field(default_factory=dict)
    skipped: bool = False  # no function could reach a collective: summaries skipped
    called_names: frozenset = frozenset()  # every callee name in the file (for skipped files)
    error: Optional[str] = None
    error_line: int = 1
    error_column: int = 1
    # A re-extraction that deepened only some functions: their positions in
    # the earlier facts' ``functions`` (see :func:`merge_partial`), else None.
    partial: Optional[tuple] = None


def merge_partial(earlier: FileFacts, patch: FileFacts) -> FileFacts:
    """Apply a partial re-extraction to the facts it was computed against."""
    if patch.partial is None or patch.error is not None:
        return patch
    functions = list(earlier.functions)
    for position, func_facts in zip(patch.partial, patch.functions):
        functions[position] = func_facts
    merged = FileFacts(path=earlier.path, module=earlier.module, functions=functions,
                       classes=earlier.classes, globals=earlier.globals, defined_names=earlier.defined_names,
                       collective_functions=earlier.collective_functions | patch.collective_functions,
                       imports=earlier.imports)
    if patch.globals:
        merged.globals = patch.globals
    return merged


# --------------------------------------------------------------------------
# Module naming and imports
# --------------------------------------------------------------------------


def module_name_for(path: str) -> str:
    """Dotted module name from the package structure around ``path``."""
    path = os.path.abspath(path)
    directory, filename = os.path.split(path)
    stem = filename[:-3] if filename.endswith(".py") else filename
    parts = [] if stem == "__init__" else [stem]
    while os.path.isfile(os.path.join(directory, "__init__.py")):
        directory, package = os.path.split(directory)
        parts.append(package)
        if not package:
            break
    parts.reverse()
    return ".".join(parts) or stem


_COMM_FACTORIES = {"Split", "Split_type", "Dup", "Create", "Create_group", "Clone", "Create_cart",
                   "Create_graph", "new_group", "new_subgroups", "Create_intercomm", "Merge"}


_BLOCK_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


def iter_statements(tree: ast.AST):
    """Every statement of a module, nested blocks and function bodies
    included, without visiting expressions (imports and assignments are
    statements, so a full ``ast.walk`` would visit ten times the nodes)."""
    stack = list(reversed(getattr(tree, "body", None) or []))
    while stack:
        node = stack.pop()
        yield node
        for name in _BLOCK_FIELDS:
            block = getattr(node, name, None)
            if block:
                stack.extend(reversed(block))


class Communicators:
    """The communicators a module makes (``sub = comm.Split(color, key)``,
    ``g = dist.new_group(ranks)``): their names, the color of each split, and
    the text of the ranks given to each new group."""

    def __init__(self):
        self.names: set = set()
        self.colors: dict = {}  # communicator text -> color expression
        self.members: dict = {}  # group text -> text of the ranks given to new_group

    def note(self, node: ast.Assign) -> None:
        """Record the communicators an assignment makes, if any."""
        func = node.value.func
        last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if last not in _COMM_FACTORIES:
            return
        for target in node.targets:
            text = dotted(target)
            if not text:
                continue
            self.names.add(text)
            if last in ("Split", "Split_type") and node.value.args:
                self.colors[text] = node.value.args[0 if last == "Split" else min(1, len(node.value.args) - 1)]
            if last == "new_group":
                ranks = node.value.args[0] if node.value.args else next(
                    (kw.value for kw in node.value.keywords if kw.arg == "ranks"), None)
                if ranks is not None:
                    self.members[text] = unparse(ranks)


def _collect_imports(tree: ast.Module, module: str, is_package: bool,
                     communicators: Optional[Communicators] = None) -> dict:
    table: dict = {}
    for node in iter_statements(tree):
        if communicators is not None and isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            communicators.note(node)
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    table[alias.asname] = alias.name
                else:
                    first = alias.name.split(".")[0]
                    table.setdefault(first, first)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg_parts = module.split(".")
                if not is_package:
                    pkg_parts = pkg_parts[:-1]
                up = node.level - 1
                if up:
                    pkg_parts = pkg_parts[: len(pkg_parts) - up] if up <= len(pkg_parts) else []
                base = ".".join([p for p in pkg_parts if p] + ([node.module] if node.module else []))
            for alias in node.names:
                if alias.name == "*":
                    continue
                table[alias.asname or alias.name] = f"{base}.{alias.name}" if base else alias.name
    return table


def canonical_text(text: Optional[str], imports: dict) -> Optional[str]:
    if not text:
        return text
    head, _, rest = text.partition(".")
    if head in imports:
        return imports[head] + ("." + rest if rest else "")
    return text


# --------------------------------------------------------------------------
# The extractor
# --------------------------------------------------------------------------


def _comm_receiver(text: str) -> bool:
    lowered = text.lower()
    for token in ("dist", "comm", "group", "coordinator", "mpi", "nccl", "gloo", "world", "mesh",
                  "communicator", "process_group"):
        if token in lowered:
            return True
    last = lowered.rsplit(".", 1)[-1].strip("_()")
    return last in ("pg", "pgs", "cpu_pg", "device_pg")


class Context:
    """Module-wide state shared by the function extractors."""

    def __init__(self, path: str, module: str, tree: ast.Module, knowledge: Knowledge,
                 settings: Settings, is_package: bool):
        self.path = path
        self.module = module
        self.tree = tree
        self.knowledge = knowledge
        self.settings = settings
        communicators = Communicators()
        self.imports = _collect_imports(tree, module, is_package, communicators)
        self.comm_names = communicators.names
        self.comm_colors = communicators.colors
        self.group_members = communicators.members
        self.atoms = AtomBuilder()  # the call/collective result atoms of this file
        self.module_functions = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        self.module_classes = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
        self.module_globals = set()
        for node in tree.body:
            for target in _assigned_names(node):
                self.module_globals.add(target)
        self.user_collectives = [c for c in settings.collectives]
        self._collective_cache: dict = {}
        self._text_verdicts: dict = {}
        self.deep_names: set = set()
        tails = set()
        for spec in knowledge.collectives:
            tails.add(spec.pattern.rsplit(".", 1)[-1])
        for pattern in self.user_collectives:
            tails.add(pattern.split(":", 1)[0].rsplit(".", 1)[-1])
        self.collective_tails = {t for t in tails if "*" not in t}
        self.collective_wild = [t for t in tails if "*" in t]

    def is_module_level(self, name: str) -> bool:
        """Whether a name is bound by an import or a module-level assignment."""
        return name in self.imports or name in self.module_globals

    # -- what a call's text alone says about its result -------------------------
    def call_text_verdicts(self, raw: str, canon: Optional[str], norm: Optional[str]) -> tuple:
        """(configured, source, by_name) for a call that is not a collective,
        decided from its text only and so computed once per text:

        * configured: ``"uniform"``/``"rank-local"`` from ``[tool.cslint]``, or None;
        * source: ``(kind, dims)`` of a preset source call, or None;
        * by_name: dims of a rank getter (``get_tp_rank()``, ``comm.rank()``),
          ``"uniform"`` for size getters and preset-uniform calls, or None.
        """
        key = (raw, canon, norm)
        found = self._text_verdicts.get(key)
        if found is not None:
            return found
        texts = [t for t in (norm, canon) if t]
        settings = self.settings
        configured = None
        if settings.uniform and any(matches_any(t, settings.uniform) for t in texts):
            configured = "uniform"
        elif settings.rank_local and any(matches_any(t, settings.rank_local) for t in texts):
            configured = "rank-local"
        last = raw.rsplit(".", 1)[-1]
        source = None
        for spec in self.knowledge.candidates("sources", last):
            if spec.what == "call" and any(_fn(t, spec.pattern) for t in texts):
                source = (spec.kind, spec.dims)
                break
        by_name = None
        if last.startswith("get_"):
            dims = rank_name_dims(last[4:])
            if dims is not None:
                by_name = (("*", dims),)
            elif size_name_is_uniform(last[4:]):
                by_name = "uniform"
        if by_name is None and last == "rank" and "." in raw and _comm_receiver(raw.rsplit(".", 1)[0]):
            by_name = _ALL
        if by_name is None and any(self.knowledge.is_uniform(t) for t in texts):
            by_name = "uniform"
        found = (configured, source, by_name)
        self._text_verdicts[key] = found
        return found

    # -- collectives --------------------------------------------------------
    def match_collective(self, call: ast.Call, raw: Optional[str], canon: Optional[str]):
        """A :class:`CollectiveMatch` when the call is a collective, else None."""
        if not raw:
            return None
        key = (raw, canon)
        cached = self._collective_cache.get(key)
        if cached is None:
            cached = self._collective_spec(raw, canon)
            self._collective_cache[key] = cached
        if cached is False:
            return None
        spec, user_group = cached
        name = raw.rsplit(".", 1)[-1]
        receiver = raw.rsplit(".", 1)[0] if "." in raw else ""
        if spec is None:
            return CollectiveMatch(name, user_group or self._infer_group(call, receiver, None) or "world", "unknown",
                                   None)
        group = spec.group or self._infer_group(call, receiver, spec) or "world"
        api = spec.api
        if api == "torch" and receiver.startswith("self") and receiver.rsplit(".", 1)[-1] in ("dist", "_dist") \
                and "tensorrt_llm" in self.knowledge.names:
            api = "trtllm"
        return CollectiveMatch(name, group, api, spec)

    def _collective_spec(self, raw: str, canon: Optional[str]):
        texts = (raw, canon) if canon and canon != raw else (raw,)
        receiver = raw.rsplit(".", 1)[0] if "." in raw else ""
        for pattern in self.user_collectives:
            pat, _, group = pattern.partition(":")
            if any(_fn(t, pat) for t in texts):
                return (None, group or None)
        tail = raw.rsplit(".", 1)[-1]
        if self.knowledge.is_not_collective(raw):
            return False
        for spec in self.knowledge.candidates("collectives", tail):
            if not any(_fn(t, spec.pattern) for t in texts):
                continue
            if spec.receiver == "comm" and not _comm_receiver(receiver) and receiver not in self.comm_names:
                continue
            if receiver in ("np", "numpy", "torch", "jnp", "tf", "F", "functools", "operator", "math", "itertools"):
                if not (canon or "").startswith("torch.distributed"):
                    continue
            return (spec, None)
        return False

    def _infer_group(self, call: ast.Call, receiver: str, spec) -> Optional[str]:
        kw = spec.group_kw if spec else "group"
        for keyword in call.keywords:
            if keyword.arg in (kw, "group", "process_group", "comm", "pg"):
                text = unparse(keyword.value)
                if isinstance(keyword.value, ast.Constant) and keyword.value.value is None:
                    return "world"
                return group_from_text(text) or f"group:{text}"
        if spec is not None and spec.group_arg is not None and len(call.args) > spec.group_arg:
            text = unparse(call.args[spec.group_arg])
            return group_from_text(text) or f"group:{text}"
        if receiver and receiver not in ("dist", "torch.distributed", "c10d"):
            return group_from_text(receiver)
        return None


def _fn(text: str, pattern: str) -> bool:
    import fnmatch

    return fnmatch.fnmatchcase(text, pattern)


def _assigned_names(node: ast.AST) -> list:
    names = []
    if isinstance(node, ast.Assign):
        for target in node.targets:
            names.extend(_target_names(target))
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        names.extend(_target_names(node.target))
    return names


def _target_names(target: ast.AST) -> list:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        out = []
        for elt in target.elts:
            out.extend(_target_names(elt))
        return out
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    return []


def _own_exprs(node: cfgmod.Node) -> list:
    """The expressions evaluated *at* a CFG node (not in nested bodies)."""
    s = node.stmt
    if s is None:
        return []
    kind = node.kind
    if kind in (cfgmod.TEST,) and isinstance(s, ast.If):
        return [s.test]
    if kind == cfgmod.LOOP:
        if isinstance(s, ast.While):
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
    if isinstance(s, (ast.With, ast.AsyncWith)):
        return [item.context_expr for item in s.items]
    if isinstance(s, ast.Match):
        return [s.subject]
    if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return list(s.decorator_list) + list(s.args.defaults) + [d for d in s.args.kw_defaults if d is not None]
    if isinstance(s, ast.ClassDef):
        return list(s.decorator_list) + list(s.bases)
    return [s]


def _calls_in_order(expr: ast.AST):
    """Calls inside an expression with the inline conditions that guard them:
    yields (call, [(kind, cond_expr, owner_node, side)]) where side is the
    branch of a ternary/short-circuit the call sits on.  Lambdas and nested
    definitions are skipped (they run later, elsewhere)."""
    out = []

    def visit(node, conds):
        if isinstance(node, (ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return
        if isinstance(node, ast.BoolOp):
            for index, value in enumerate(node.values):
                extra = [("branch", v, node, ("bool", index)) for v in node.values[:index]]
                visit(value, conds + extra)
            return
        if isinstance(node, ast.IfExp):
            visit(node.test, conds)
            visit(node.body, conds + [("branch", node.test, node, "body")])
            visit(node.orelse, conds + [("branch", node.test, node, "orelse")])
            return
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            inner = list(conds)
            for index, gen in enumerate(node.generators):
                visit(gen.iter, inner)
                inner = inner + [("loop", gen.iter, node, ("gen", index))]
                for cond in gen.ifs:
                    visit(cond, inner)
                    inner = inner + [("branch", cond, node, "if")]
            if isinstance(node, ast.DictComp):
                visit(node.key, inner)
                visit(node.value, inner)
            else:
                visit(node.elt, inner)
            return
        if isinstance(node, ast.Call):
            # arguments are evaluated before the call happens
            visit(node.func, conds)
            for arg in node.args:
                visit(arg, conds)
            for kw in node.keywords:
                visit(kw.value, conds)
            out.append((node, conds))
            return
        for child in iter_children(node):
            visit(child, conds)

    visit(expr, [])
    return out


class _OwnerMark:
    """On the :meth:`FunctionExtractor.scan_calls` stack: the statement
    whose subtree ends here hands ownership back to ``previous``."""

    __slots__ = ("previous",)

    def __init__(self, previous):
        self.previous = previous


class FunctionExtractor:
    """Facts for one function body (or the module body)."""

    def __init__(self, ctx: Context, func: ast.AST, qualname: str, class_key: Optional[str],
                 is_method: bool, is_static: bool, local_defs: dict):
        self.ctx = ctx
        self.atoms = ctx.atoms
        self.func = func
        self.qualname = qualname
        self.class_key = class_key
        self.local_defs = local_defs  # nested function name -> qualname
        args = getattr(func, "args", None)
        params = []
        if args is not None:
            params = [a.arg for a in args.posonlyargs + args.args]
            if args.vararg:
                params.append("*" + args.vararg.arg)
            params += [a.arg for a in args.kwonlyargs]
            if args.kwarg:
                params.append("**" + args.kwarg.arg)
        self.params = tuple(params)
        self.self_name = params[0] if (is_method and not is_static and params) else None
        self.self_offset = 1 if self.self_name else 0
        self.annotations = {}
        if args is not None:
            for a in args.posonlyargs + args.args + args.kwonlyargs:
                if a.annotation is not None:
                    text = dotted(a.annotation) or (a.annotation.value if isinstance(a.annotation, ast.Constant) and isinstance(a.annotation.value, str) else None)
                    if text:
                        self.annotations[a.arg] = text
        self._info_cache = {}
        self._static = {}
        self._uniform_texts = ()
        self._env_reads = 0
        self._sites_in_cache = {}
        self._parents = None
        self._local = None
        # Summary extraction evaluates a statement's call arguments twice (for
        # the parameter flow of its calls, then for the statement's value)
        # under the same variables; this keeps the first result for the rest
        # of the statement.  None outside summary extraction.
        self._args_memo: Optional[dict] = None
        self._calls_memo: dict = {}  # id(statement) -> [(call, ref)] (summary pass)
        self._calls_by_statement: dict = {}  # noted by scan_calls: id(statement) -> [call]
        self._lambdas_by_statement: dict = {}
        # noted by scan_calls
        self.has_loop = False
        self.signal_handlers: list = []
        # Local dicts read with constant keys (``state["step"]``): name -> keys.
        # The CFG dataflow keeps one entry per such key, ``("key", name, k)``,
        # so ``{"rank": get_rank(), "step": 0}["step"]`` stays uniform.
        self.dict_keys: dict = {}

    # parent links and local names are built on first use: most functions of
    # a file are never analysed in depth
    @property
    def parents(self) -> dict:
        if self._parents is None:
            self._parents = {}
            self._index_parents()
        return self._parents

    @property
    def blocks(self) -> dict:
        self.parents  # noqa: B018 - builds both
        return self._blocks

    @property
    def local_names(self) -> set:
        if self._local is None:
            self.scan_calls()  # notes the local names
        return self._local

    def _index_parents(self) -> None:
        body = self.func.body if isinstance(self.func.body, list) else []
        self._blocks = {}
        for stmt in body:
            self._blocks[id(stmt)] = body
        stack = [(s, None) for s in body]
        while stack:
            node, parent = stack.pop()
            self._parents[id(node)] = parent
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            for name in ("body", "orelse", "finalbody", "handlers", "cases"):
                block = getattr(node, name, None) or []
                for child in block:
                    stack.append((child, node))
                    self._blocks[id(child)] = block

    def inside(self, stmt: Optional[ast.AST], owner: ast.AST) -> bool:
        while stmt is not None:
            if stmt is owner:
                return True
            stmt = self.parents.get(id(stmt))
        return False

    # -- modes --------------------------------------------------------------
    def mode_names_used(self) -> bool:
        modes = self.ctx.knowledge.modes
        if not modes:
            return False
        patterns = [p for m in modes for p in m.predicates]
        tails = {p.rsplit(".", 1)[-1] for p in patterns}
        for node in fast_walk(self.func) if not isinstance(self.func, ast.Module) else self._module_walk():
            if isinstance(node, ast.Attribute) and node.attr in tails:
                return True
            if isinstance(node, ast.Name) and node.id in tails:
                return True
        return False

    def _module_walk(self):
        for stmt in self.func.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            yield from fast_walk(stmt)

    def fold_for(self, modes: frozenset):
        specs = self.ctx.knowledge.modes

        def fold(test: ast.expr) -> Optional[bool]:
            if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                inner = fold(test.operand)
                return None if inner is None else not inner
            if isinstance(test, ast.BoolOp):
                values = [fold(v) for v in test.values]
                if isinstance(test.op, ast.And):
                    if any(v is False for v in values):
                        return False
                    return True if all(v is True for v in values) else None
                if any(v is True for v in values):
                    return True
                return False if all(v is False for v in values) else None
            text = dotted(test)
            if text is None:
                return None
            text = self._normalise_self(text)
            for spec in specs:
                if fnmatch_any(text, spec.predicates):
                    return spec.name in modes
            return None

        return fold

    def _normalise_self(self, text: str) -> str:
        if self.self_name and self.self_name != "self":
            if text == self.self_name or text.startswith(self.self_name + "."):
                return "self" + text[len(self.self_name):]
        return text

    # -- driver ---------------------------------------------------------------
    def scan_calls(self) -> tuple:
        """(callee names, has a direct collective) from one cheap walk, which
        also notes raises, loops and the function's local names (the
        summary pass needs them and a second walk cost as much again)."""
        names = set()
        collective = False
        self.raises = False
        self.signal_handlers = []
        local = {p.lstrip("*") for p in self.params}
        local.discard(self.self_name)
        dict_keys: dict = {}
        body = self.func.body if isinstance(self.func.body, list) else [self.func.body]
        stack = list(body)
        # The calls with arguments that each statement makes itself, for the
        # summary pass (which would otherwise walk every statement again).
        # A marker pushed under a statement's children comes back once the
        # whole subtree is done, and restores the enclosing owner.
        calls_by_statement: dict = {}
        lambdas_by_statement: dict = {}
        owner = None
        stmt_type = ast.stmt
        ctx = self.ctx
        tails = ctx.collective_tails
        Call, Name, Attribute, Store, Del = ast.Call, ast.Name, ast.Attribute, ast.Store, ast.Del
        nested = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        while stack:
            node = stack.pop()
            t = type(node)
            if t is _OwnerMark:
                owner = node.previous
                continue
            if isinstance(node, stmt_type):
                stack.append(_OwnerMark(owner))
                owner = node
            if t is Name:
                if type(node.ctx) is Store or type(node.ctx) is Del:
                    local.add(node.id)
                continue
            if t is Call:
                if node.args or node.keywords:
                    calls_by_statement.setdefault(id(owner), []).append(node)
                func = node.func
                name = func.attr if type(func) is Attribute else func.id if type(func) is Name else None
                if name == "signal" and len(node.args) >= 2 and \
                        canonical_text(dotted(func), ctx.imports) == "signal.signal":
                    handler = self.resolve_ref(node.args[1])
                    if handler is not None:
                        self.signal_handlers.append(handler)
                if name:
                    names.add(name)
                    if name in _LOCAL_IO_CALLS:
                        self.raises = True  # I/O fails on one rank's disk or network only
                    if not collective and name in tails:
                        raw = dotted(func)
                        if raw and ctx.match_collective(node, raw, canonical_text(raw, ctx.imports)):
                            collective = True
            elif t in nested:
                local.add(node.name)
                stack.extend(node.decorator_list)
                continue
            elif t is ast.Lambda:
                lambdas_by_statement.setdefault(id(owner), []).append(node)
                continue
            elif t is ast.Raise or t is ast.Assert:
                self.raises = True
            elif t is ast.For or t is ast.While or t is ast.AsyncFor:
                self.has_loop = True
            elif t is ast.Subscript:
                if type(node.value) is Name and type(node.slice) is ast.Constant and type(node.slice.value) is str:
                    dict_keys.setdefault(node.value.id, set()).add(node.slice.value)
            elif t is ast.ExceptHandler:
                if node.name:
                    local.add(node.name)
            elif t is ast.Import or t is ast.ImportFrom:
                for alias in node.names:
                    local.add((alias.asname or alias.name).split(".")[0])
                continue
            children_into(node, stack)
        self._local = local
        self._calls_by_statement = calls_by_statement
        self._lambdas_by_statement = lambdas_by_statement
        self.dict_keys = dict_keys
        return frozenset(names), collective

    def extract(self, deep: bool = True, called_names: frozenset = frozenset()) -> FuncFacts:
        key = f"{self.ctx.module}:{self.qualname}"
        if not deep:
            variant = self._light_variant()
            return FuncFacts(key, self.qualname, self.ctx.module, self.ctx.path,
                             getattr(self.func, "lineno", 1), self.class_key, self.params,
                             self.self_offset, {None: variant}, False, getattr(self, "raises", False),
                             called_names, tuple(self.signal_handlers))
        variants: dict = {}
        if self.mode_names_used():
            for modes in self.ctx.knowledge.mode_assignments():
                variants[modes] = self._variant(self.fold_for(modes))
        else:
            variants[None] = self._variant(None)
        return FuncFacts(key, self.qualname, self.ctx.module, self.ctx.path,
                         getattr(self.func, "lineno", 1), self.class_key, self.params,
                         self.self_offset, variants, True, getattr(self, "raises", False), called_names,
                         tuple(self.signal_handlers))

    # -- summary-only extraction (functions that cannot reach a collective) ----------
    def _entry_env(self) -> dict:
        env = {}
        for index, name in enumerate(self.params):
            clean = name.lstrip("*")
            if index == 0 and self.self_name:
                continue
            atoms = frozenset({param(index)})
            dims = rank_name_dims(clean)
            if dims is not None and not (self.ctx.settings.uniform and matches_any(clean, self.ctx.settings.uniform)):
                atoms |= {source("rank id", clean, self.ctx.path, getattr(self.func, "lineno", 0), (("*", dims),))}
            env[clean] = atoms
        return env

    def _light_variant(self) -> Variant:
        """Field writes, returns and argument flows from one syntactic pass:
        variables accumulate (flow-insensitive within branches), implicit flow
        comes from enclosing tests and from earlier rank-local exits in the
        same block.  Sound for summaries, cheaper than the CFG."""
        variant = Variant()
        env = self._entry_env()
        body = self.func.body if isinstance(self.func.body, list) else []
        # A second pass carries values around loops; without a loop it would
        # only make earlier reads see later assignments.
        for _ in range(2 if self.has_loop else 1):
            variant = Variant()
            self._light_block(body, env, EMPTY, variant)
        self._args_memo = None
        self.exit_env = env
        return variant

    def _light_block(self, stmts, env, implicit, variant) -> None:
        for s in stmts:
            exit_atoms = self._light_stmt(s, env, implicit, variant)
            if exit_atoms:
                implicit = implicit | exit_atoms

    def _light_assign_name(self, env, name, atoms):
        old = env.get(name)
        env[name] = atoms if old is None else (old | atoms)

    def _light_stmt(self, s, env, implicit, variant) -> frozenset:
        """Handle one statement; returns the atoms of a condition under which
        the rest of the block may be skipped (an early exit inside it)."""
        t = type(s)
        if t in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            env[s.name] = EMPTY
            return EMPTY
        self._args_memo = {}
        self._light_calls(s, env, variant, implicit)
        if t is ast.If:
            cond = self.eval(s.test, env)
            inner = implicit | cond
            self._light_block(s.body, env, inner, variant)
            self._light_block(s.orelse, env, inner, variant)
            return cond if (_first_exit_in(s.body) or _first_exit_in(s.orelse)) else EMPTY
        if t in (ast.For, ast.AsyncFor):
            it = self.eval(s.iter, env)
            for name in _target_names(s.target):
                self._light_assign_name(env, name, it | implicit)
            self._light_block(s.body, env, implicit | it, variant)
            self._light_block(s.orelse, env, implicit | it, variant)
            return EMPTY
        if t is ast.While:
            cond = self.eval(s.test, env)
            self._light_block(s.body, env, implicit | cond, variant)
            self._light_block(s.orelse, env, implicit | cond, variant)
            return EMPTY
        if t is ast.Try or type(s).__name__ == "TryStar":
            self._light_block(s.body, env, implicit, variant)
            raised = EMPTY
            for inner in s.body:
                if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    continue
                raised |= self._exception_atoms(cfgmod.Node(0, cfgmod.STMT, inner), env)
                if isinstance(inner, ast.Raise):
                    raised |= implicit
                if isinstance(inner, ast.If) and any(isinstance(x, ast.Raise) for x in fast_walk(inner)):
                    raised |= self.eval(inner.test, env)
            for handler in s.handlers:
                exc = raised
                if handler.name:
                    env[handler.name] = exc
                self._light_block(handler.body, env, implicit | exc, variant)
            self._light_block(s.orelse, env, implicit, variant)
            self._light_block(s.finalbody, env, implicit, variant)
            return EMPTY
        if t in (ast.With, ast.AsyncWith):
            for item in s.items:
                if item.optional_vars is not None:
                    atoms = self.eval(item.context_expr, env)
                    for name in _target_names(item.optional_vars):
                        self._light_assign_name(env, name, atoms)
            self._light_block(s.body, env, implicit, variant)
            return EMPTY
        if t is ast.Match:
            subject = self.eval(s.subject, env)
            for case in s.cases:
                self._light_block(case.body, env, implicit | subject, variant)
            return EMPTY
        if t in (ast.Assign, ast.AnnAssign, ast.AugAssign):
            if s.value is None:
                return EMPTY
            targets = s.targets if t is ast.Assign else [s.target]
            pairs = _pairwise(targets, s.value)
            if pairs is not None:
                for target, part in pairs:
                    for name in _target_names(target):
                        self._light_assign_name(env, name, self.eval(part, env) | implicit)
            atoms = self.eval(s.value, env) | implicit
            for target in targets:
                for sub in _flatten_targets(target):
                    if pairs is not None and isinstance(sub, ast.Name):
                        continue
                    if isinstance(sub, ast.Name):
                        self._light_assign_name(env, sub.id, atoms)
                    elif isinstance(sub, ast.Subscript) and isinstance(sub.value, ast.Name):
                        self._light_assign_name(env, sub.value.id, atoms | self.eval(sub.slice, env))
                    attr = self._self_attr(sub)
                    base_attr = self._self_attr(sub.value) if isinstance(sub, ast.Subscript) else None
                    if attr or base_attr:
                        extra = self.eval(sub.slice, env) if base_attr else EMPTY
                        variant.fields.append(FieldWrite(self.class_key, attr or base_attr, atoms | extra, s.lineno))
                        if attr and isinstance(s.value, ast.Call):
                            ref = self.resolve_ref(s.value.func)
                            if ref is not None:
                                variant.field_types.append(FieldType(self.class_key, attr, ref))
                        if attr and isinstance(s.value, ast.Name) and s.value.id in self.annotations:
                            variant.field_types.append(FieldType(self.class_key, attr, qual_ref(
                                canonical_text(self.annotations[s.value.id], self.ctx.imports))))
            return EMPTY
        if t is ast.Return:
            if s.value is not None:
                variant.returns = variant.returns | self.eval(s.value, env) | implicit
            return EMPTY
        if t is ast.Expr and isinstance(s.value, ast.Call) and isinstance(s.value.func, ast.Attribute) \
                and s.value.func.attr in MUTATORS:
            call = s.value
            atoms = implicit
            for arg in call.args:
                atoms = atoms | self.eval(arg, env)
            receiver = call.func.value
            if isinstance(receiver, ast.Name):
                self._light_assign_name(env, receiver.id, atoms)
            attr = self._self_attr(receiver)
            if attr is not None:
                variant.fields.append(FieldWrite(self.class_key, attr, atoms, s.lineno))
            return EMPTY
        if t in (ast.Import, ast.ImportFrom):
            for alias in s.names:
                env[(alias.asname or alias.name).split(".")[0]] = EMPTY
        return EMPTY

    def _light_calls(self, s, env, variant, implicit=EMPTY) -> None:
        """Calls to analysed functions made by this statement (for parameter flow)."""
        for node, ref in self._resolved_calls(s):
            args, kwargs = self._args(node, env)
            if not implicit and not any(args) and not any(a for _, a in kwargs):
                continue
            raw = dotted(node.func) or "call"
            site = Site(Span.of(node), raw, raw, None, ref, args, kwargs, ())
            site.ctx_atoms = implicit
            variant.sites.append(site)

    def _resolved_calls(self, s) -> list:
        """(call, ref) for the calls with arguments that a statement makes
        itself (not in nested blocks or nested definitions; lambdas
        included) and that resolve to a function, in source order; found by
        the walk of :meth:`scan_calls`."""
        memo = self._calls_memo
        found = memo.get(id(s))
        if found is not None:
            return found
        calls = list(self._calls_by_statement.get(id(s), ()))
        for lam in self._lambdas_by_statement.get(id(s), ()):
            calls.extend(node for node in fast_walk(lam.body)
                         if type(node) is ast.Call and (node.args or node.keywords))
        calls.sort(key=lambda node: (node.lineno, node.col_offset))
        found = []
        for node in calls:
            ref = self.resolve_ref(node.func)
            if ref is not None:
                found.append((node, ref))
        memo[id(s)] = found
        return found

    def _variant(self, fold) -> Variant:
        graph = cfgmod.build_cfg(self.func, fold)
        ipdom = cfgmod.postdominators(graph)
        cd = cfgmod.control_dependence(graph, ipdom)
        live = cfgmod.reachable(graph)
        self.graph, self.cd, self.live = graph, cd, live
        self.handler_nodes = self._handler_nodes(graph)
        self._cond_cache = {}
        self._sites_in_cache = {}
        closures = {n: cfgmod.control_closure(cd, n) for n in live}
        for n, owner in graph.finally_owner.items():
            if n in closures:
                closures[n] = self._finally_closure(graph, cd, n, owner, closures[n])
        self.closures = closures
        envs = self._dataflow(graph, closures)
        self.exit_env = envs.get(graph.exit, {})
        return self._collect(graph, closures, envs)

    def final_globals(self) -> dict:
        """Module bodies: the non-uniform module-level variables at the end."""
        return {name: atoms for name, atoms in getattr(self, "exit_env", {}).items() if atoms and type(name) is str}

    def _handler_nodes(self, graph) -> set:
        out = set()
        for node in graph.nodes:
            if node.stmt is not None and node.kind != cfgmod.EXCEPT:
                parent = self.parents.get(id(node.stmt))
                while parent is not None:
                    if isinstance(parent, ast.ExceptHandler):
                        out.add(node.id)
                        break
                    parent = self.parents.get(id(parent))
            elif node.kind == cfgmod.EXCEPT:
                out.add(node.id)
        return out

    def _finally_closure(self, graph, cd, n, owner, closure):
        try_entry = None
        for stmt in owner.body:
            try_entry = graph.node_of(stmt)
            if try_entry is not None:
                break
        outer = {d for d, _ in cfgmod.control_closure(cd, try_entry)} if try_entry is not None else set()
        kept = []
        for d, label in closure:
            stmt = graph.nodes[d].stmt
            in_final = any(self.inside(stmt, f) for f in owner.finalbody) if stmt is not None else False
            if in_final or d in outer:
                kept.append((d, label))
        return kept

    # -- values ---------------------------------------------------------------
    def _cond_atoms(self, graph, d: int, envs) -> frozenset:
        env = envs.get(d, {})
        cached = self._cond_cache.get(d)
        if cached is not None and cached[0] is env:
            return cached[1]
        atoms = self._cond_atoms_uncached(graph, d, env)
        self._cond_cache[d] = (env, atoms)
        return atoms

    def _cond_atoms_uncached(self, graph, d: int, env) -> frozenset:
        node = graph.nodes[d]
        if node.kind in (cfgmod.TEST, cfgmod.ASSERT) or (node.kind == cfgmod.LOOP and isinstance(node.stmt, ast.While)):
            test = node.stmt.test
            if isinstance(test, ast.Constant):
                return EMPTY
            return self.eval(test, env)
        if node.kind == cfgmod.LOOP:
            return self.eval(node.stmt.iter, env)
        if node.kind == cfgmod.CASE:
            match_stmt = self.parents.get(id(node.stmt))
            atoms = self.eval(match_stmt.subject, env) if isinstance(match_stmt, ast.Match) else EMPTY
            if node.stmt.guard is not None:
                atoms |= self.eval(node.stmt.guard, env)
            return atoms
        if any(label in ("raise",) for _, label in node.succs):
            return self._exception_atoms(node, env)
        return EMPTY

    def _single_rank(self, graph, n: int) -> bool:
        """Whether node ``n`` only runs when the group has a single rank
        (``if world_size > 1: ... else: <here>``)."""
        for d, label in self.closures.get(n, ()):
            node = graph.nodes[d]
            if node.kind == cfgmod.TEST and isinstance(node.stmt, ast.If):
                side = _single_rank_side(node.stmt.test)
                if side is not None and side == label:
                    return True
        return False

    def _is_exception_decision(self, graph, d: int) -> bool:
        node = graph.nodes[d]
        return node.kind == cfgmod.STMT and any(label == "raise" for _, label in node.succs)

    def _exception_atoms(self, node, env=None) -> frozenset:
        """What an exception raised by this statement depends on: an unknown
        callee (library code, I/O) may raise on one rank only; a builtin such
        as ``int()`` or a subscript raises only if its operands differ; a call
        to an analysed function raises only if that function contains a
        ``raise`` (decided by the whole-tree pass, atom ``E``)."""
        env = env or {}
        stmt = node.stmt
        if stmt is None or isinstance(stmt, (ast.Raise, ast.Assert)):
            return EMPTY  # explicit raises are steered by their own conditions
        text = _short(unparse(stmt).split("\n")[0])
        local = frozenset({source("exception from local work", text, self.ctx.path, getattr(stmt, "lineno", 0), _ALL)})
        exprs, calls, _ = self._node_info(node)
        atoms = set()
        for call, _inline, raw, canon, match in calls:
            if match is not None:
                continue
            if raw in PURE_BUILTINS and raw not in self.local_names and raw not in self.ctx.module_functions:
                for arg in call.args:
                    atoms |= self.eval(arg.value if isinstance(arg, ast.Starred) else arg, env)
                for kw in call.keywords:
                    atoms |= self.eval(kw.value, env)
                continue
            ref = self.resolve_ref(call.func)
            if ref is None or ref.tag == "class":
                return local
            atoms.add(raised_by(ref, self.ctx.path, getattr(stmt, "lineno", 0), text))
        for expr in exprs:
            for sub in fast_walk(expr):
                if isinstance(sub, ast.Await):
                    return local
                if isinstance(sub, ast.Subscript) and isinstance(sub.ctx, ast.Load):
                    atoms |= self.eval(sub.value, env) | self.eval(sub.slice, env)
        # operands that may differ make the exception (and the path) differ
        return frozenset(atoms)

    def _implicit(self, graph, n: int, envs) -> frozenset:
        atoms = EMPTY
        in_handler = n in self.handler_nodes
        for d, label in self.closures.get(n, ()):
            if label == "never":
                continue
            if not in_handler and (label == "raise" or self._is_exception_decision(graph, d)):
                continue
            atoms = atoms | self._cond_atoms(graph, d, envs)
        return atoms

    def _dataflow(self, graph, closures) -> dict:
        """env_in per node: variable -> atoms (may-union), with implicit flow."""
        entry_env = self._entry_env()
        envs_in: dict = {graph.entry: entry_env}
        outs: dict = {}
        order = self._rpo(graph)
        position = {n: i for i, n in enumerate(order)}
        # nodes whose implicit flow reads a decision's condition
        readers: dict = {}
        for n in order:
            for d, _label in closures.get(n, ()):
                readers.setdefault(d, []).append(n)
        import heapq

        heap = list(range(len(order)))
        queued = set(heap)
        budget = 50 * len(order) + 100  # a safety net; the lattice is finite
        while heap and budget > 0:
            budget -= 1
            i = heapq.heappop(heap)
            queued.discard(i)
            n = order[i]
            node = graph.nodes[n]
            if n != graph.entry:
                merged: dict = {}
                for p in node.preds:
                    out = outs.get(p)
                    if out is None:
                        continue
                    if not merged:
                        merged = dict(out)
                        continue
                    for k, v in out.items():
                        old = merged.get(k)
                        if old is None:
                            merged[k] = v
                        elif old is not v:
                            merged[k] = old | v
                if n not in envs_in or envs_in[n] != merged:
                    first = n not in envs_in
                    envs_in[n] = merged
                    if not first:
                        for m in readers.get(n, ()):
                            j = position.get(m)
                            if j is not None and j not in queued:
                                queued.add(j)
                                heapq.heappush(heap, j)
            env = envs_in.get(n, {})
            out = self._transfer(graph, n, env, envs_in)
            if n not in outs or outs[n] != out:
                outs[n] = out
                for succ, _label in node.succs:
                    j = position.get(succ)
                    if j is not None and j not in queued:
                        queued.add(j)
                        heapq.heappush(heap, j)
        if heap:
            # Out of budget: every node still gets the values that reach it
            # (one pass in order) rather than none, which would read as uniform.
            for n in order:
                merged = dict(envs_in.get(n, {}))
                for p in graph.nodes[n].preds:
                    for k, v in outs.get(p, {}).items():
                        merged[k] = merged[k] | v if k in merged else v
                envs_in[n] = merged
                outs[n] = self._transfer(graph, n, merged, envs_in)
        return envs_in

    def _rpo(self, graph) -> list:
        seen = {graph.entry}
        order = []
        stack = [(graph.entry, iter(graph.nodes[graph.entry].succs))]
        while stack:
            v, it = stack[-1]
            advanced = False
            for s, _ in it:
                if s not in seen:
                    seen.add(s)
                    stack.append((s, iter(graph.nodes[s].succs)))
                    advanced = True
                    break
            if not advanced:
                order.append(v)
                stack.pop()
        order.reverse()
        return order

    def _transfer(self, graph, n: int, env: dict, envs) -> dict:
        node = graph.nodes[n]
        s = node.stmt
        if s is None:
            return env
        out = None

        dict_keys = self.dict_keys

        def setvar(name, atoms, strong=True):
            nonlocal out
            if out is None:
                out = dict(env)
            if strong:
                out[name] = atoms
            else:
                out[name] = out.get(name, EMPTY) | atoms
            if type(name) is str and name in dict_keys:
                # any write to the dict itself reaches every key; a literal
                # refines them afterwards (_dict_literal_keys)
                for key in dict_keys[name]:
                    setvar(("key", name, key), atoms, strong)

        info = self._node_info(node)
        # walrus anywhere in the node's own expressions
        for sub in info[2]:
            setvar(sub.target.id, self.eval(sub.value, env) | self._implicit(graph, n, envs))
        if node.kind == cfgmod.LOOP and isinstance(s, (ast.For, ast.AsyncFor)):
            atoms = self.eval(s.iter, env) | self._implicit(graph, n, envs)
            for name in _target_names(s.target):
                setvar(name, atoms, strong=False)
        elif node.kind == cfgmod.EXCEPT and s.name:
            setvar(s.name, frozenset({source("exception from local work", "caught exception", self.ctx.path,
                                       s.lineno, _ALL)}))
        elif node.kind == cfgmod.STMT:
            if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                value = s.value
                if value is not None:
                    implicit = self._implicit(graph, n, envs)
                    targets = s.targets if isinstance(s, ast.Assign) else [s.target]
                    pairs = _pairwise(targets, value)
                    if self._single_rank(graph, n):
                        # only one rank runs here: nothing can differ
                        for target in targets:
                            self._assign(target, EMPTY, setvar, False, env)
                        return out if out is not None else env
                    if pairs is not None:
                        for target, part in pairs:
                            self._assign(target, self.eval(part, env) | implicit, setvar, False, env)
                    else:
                        atoms = self.eval(value, env) | implicit
                        for target in targets:
                            self._assign(target, atoms, setvar, isinstance(s, ast.AugAssign), env)
                        if isinstance(value, ast.Dict) and not isinstance(s, ast.AugAssign):
                            self._dict_literal_keys(targets, value, implicit, setvar, env)
            elif isinstance(s, (ast.With, ast.AsyncWith)):
                for item in s.items:
                    if item.optional_vars is not None:
                        atoms = self.eval(item.context_expr, env)
                        for name in _target_names(item.optional_vars):
                            setvar(name, atoms)
            elif isinstance(s, (ast.Import, ast.ImportFrom)):
                for alias in s.names:
                    setvar((alias.asname or alias.name).split(".")[0], EMPTY)
            elif isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                setvar(s.name, EMPTY)
            elif isinstance(s, ast.Expr) and isinstance(s.value, (ast.Call, ast.Await)):
                call = s.value.value if isinstance(s.value, ast.Await) else s.value
                if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
                    if call.func.attr in MUTATORS and isinstance(call.func.value, ast.Name):
                        atoms = EMPTY
                        for arg in call.args:
                            atoms |= self.eval(arg, env)
                        setvar(call.func.value.id, atoms | self._implicit(graph, n, envs), strong=False)
        # in-place collectives make their buffers group-uniform
        for call, _inline, raw, canon, match in info[1]:
                if match is None or match.spec is None:
                    continue
                spec = match.spec
                for index in spec.inplace:
                    if index < len(call.args) and isinstance(call.args[index], ast.Name):
                        name = call.args[index].id
                        setvar(name, self.atoms.collective(match.group, (out or env).get(name, EMPTY)))
                for kw in call.keywords:
                    if kw.arg in ("tensor", "object_list", "tensor_list", "output", "recvbuf", "buf") \
                            and isinstance(kw.value, ast.Name):
                        setvar(kw.value.id, self.atoms.collective(match.group, (out or env).get(kw.value.id, EMPTY)))
        return out if out is not None else env

    def _node_info(self, node) -> tuple:
        """(own expressions, calls with their collective match, walrus nodes) of a node."""
        key = (id(node.stmt), node.kind)
        info = self._info_cache.get(key)
        if info is None:
            exprs = _own_exprs(node)
            calls = []
            walrus = []
            for expr in exprs:
                for call, inline in _calls_in_order(expr):
                    raw = dotted(call.func)
                    canon = canonical_text(raw, self.ctx.imports) if raw else None
                    match = self.ctx.match_collective(call, raw, canon) if raw else None
                    calls.append((call, inline, raw, canon, match))
                for sub in fast_walk(expr):
                    if isinstance(sub, ast.NamedExpr) and isinstance(sub.target, ast.Name):
                        walrus.append(sub)
            info = (exprs, calls, walrus)
            self._info_cache[key] = info
        return info

    def _assign(self, target, atoms, setvar, augmented, env):
        if isinstance(target, ast.Name):
            setvar(target.id, atoms, strong=not augmented)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self._assign(elt, atoms, setvar, augmented, env)
        elif isinstance(target, ast.Starred):
            self._assign(target.value, atoms, setvar, augmented, env)
        elif isinstance(target, ast.Subscript):
            base = target.value
            extra = self.eval(target.slice, env)
            if isinstance(base, ast.Name):
                setvar(base.id, atoms | extra, strong=False)
                key = target.slice.value if isinstance(target.slice, ast.Constant) else None
                if isinstance(key, str) and key in self.dict_keys.get(base.id, ()):
                    setvar(("key", base.id, key), atoms, strong=not augmented)
        # attribute targets are field writes, collected in _collect

    def _dict_literal_keys(self, targets, value: ast.Dict, implicit, setvar, env) -> None:
        """``name = {"k": v, ...}``: each key read later gets its own value."""
        if any(k is None or not isinstance(k, ast.Constant) for k in value.keys):
            return  # ``**other`` or computed keys: every key may hold anything
        literal = {k.value: v for k, v in zip(value.keys, value.values)}
        for target in targets:
            if isinstance(target, ast.Name):
                for key in self.dict_keys.get(target.id, ()):
                    part = literal.get(key)
                    setvar(("key", target.id, key), (self.eval(part, env) if part is not None else EMPTY) | implicit)

    def _self_attr(self, node: ast.AST) -> Optional[str]:
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and self.self_name \
                and node.value.id == self.self_name and self.class_key:
            return node.attr
        return None

    def eval(self, expr: Optional[ast.AST], env: dict) -> frozenset:
        """Atoms an expression's value depends on."""
        if expr is None:
            return EMPTY
        t = type(expr)
        if t is ast.Constant:
            return EMPTY
        if t is ast.Name:
            name = expr.id
            if self._uniform_texts and name in self._uniform_texts:
                return EMPTY
            if name in self.local_names:
                self._env_reads += 1
                if name in env:
                    return env[name]
        else:
            if self._uniform_texts and ast.unparse(expr) in self._uniform_texts:
                return EMPTY
            cached = self._static.get(id(expr))
            if cached is not None:
                return cached
            before = self._env_reads
            result = self._eval(expr, env, t)
            if self._env_reads == before:
                self._static[id(expr)] = result
            return result
        return self._eval(expr, env, t)

    def _eval(self, expr, env: dict, t) -> frozenset:
        ctx = self.ctx
        settings = ctx.settings
        knowledge = ctx.knowledge
        if t is ast.Name:
            name = expr.id
            if name in env:
                return env[name]
            if settings.uniform and matches_any(name, settings.uniform):
                return EMPTY
            if settings.rank_local and matches_any(name, settings.rank_local):
                return frozenset({source("rank-local (configured)", name, ctx.path, expr.lineno, _ALL)})
            for spec in knowledge.candidates("sources", name):
                if spec.what == "value" and "." not in spec.pattern and _fn(name, spec.pattern):
                    return frozenset({source(spec.kind, name, ctx.path, expr.lineno, spec.dims)})
            if name in ctx.module_globals:
                return frozenset({global_read(ctx.module, name)})
            dims = rank_name_dims(name)
            if dims is not None:
                return frozenset({source("rank id", name, ctx.path, expr.lineno, (("*", dims),))})
            return EMPTY
        if t is ast.Attribute:
            text = dotted(expr)
            if text is not None:
                norm = self._normalise_self(text)
                if settings.uniform and matches_any(norm, settings.uniform):
                    return EMPTY
                if settings.rank_local and matches_any(norm, settings.rank_local):
                    return frozenset({source("rank-local (configured)", norm, ctx.path, expr.lineno, _ALL)})
                dims = rank_name_dims(expr.attr)
                if dims is not None and "()" not in text.rsplit(".", 1)[-1]:
                    return frozenset({source("rank id", norm, ctx.path, expr.lineno, (("*", dims),))})
                if size_name_is_uniform(expr.attr):
                    return EMPTY
                for spec in knowledge.candidates("sources", expr.attr):
                    if spec.what == "value" and _fn(norm, spec.pattern):
                        return frozenset({source(spec.kind, norm, ctx.path, expr.lineno, spec.dims)})
                if knowledge.is_uniform(norm):
                    return EMPTY
            attr = self._self_attr(expr)
            if attr is not None:
                return frozenset({field_read(self.class_key, attr)})
            return self.eval(expr.value, env)
        if t is ast.Call:
            return self._eval_call(expr, env)
        if t in (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp):
            self._env_reads += 1
            inner = dict(env)
            atoms = EMPTY
            for gen in expr.generators:
                it = self.eval(gen.iter, inner)
                atoms |= it
                for name in _target_names(gen.target):
                    inner[name] = it
                for cond in gen.ifs:
                    atoms |= self.eval(cond, inner)
            if t is ast.DictComp:
                return atoms | self.eval(expr.key, inner) | self.eval(expr.value, inner)
            return atoms | self.eval(expr.elt, inner)
        if t is ast.Lambda:
            return EMPTY
        if t is ast.NamedExpr:
            return self.eval(expr.value, env)
        if t is ast.Subscript:
            if isinstance(expr.slice, ast.Constant) and expr.slice.value in RANK_ENV_VARS:
                base = canonical_text(dotted(expr.value), ctx.imports)
                if base in ("os.environ", "environ"):
                    return frozenset({source("rank id", f"environment variable {expr.slice.value}", ctx.path,
                                       expr.lineno, _ALL)})
            if type(expr.value) is ast.Name and type(expr.slice) is ast.Constant:
                entry = env.get(("key", expr.value.id, expr.slice.value))
                if entry is not None:
                    self._env_reads += 1
                    return entry
            return self.eval(expr.value, env) | self.eval(expr.slice, env)
        atoms = EMPTY
        for child in iter_children(expr):
            if isinstance(child, (ast.expr_context, ast.operator, ast.boolop, ast.cmpop, ast.unaryop)):
                continue
            atoms |= self.eval(child, env)
        return atoms

    def _args(self, call: ast.Call, env) -> tuple:
        memo = self._args_memo
        if memo is not None:
            found = memo.get(id(call))
            if found is not None:
                return found
        args = tuple(self.eval(a.value if isinstance(a, ast.Starred) else a, env) for a in call.args)
        kwargs = tuple((kw.arg or "**", self.eval(kw.value, env)) for kw in call.keywords)
        if memo is not None:
            memo[id(call)] = (args, kwargs)
        return args, kwargs

    def _eval_call(self, call: ast.Call, env) -> frozenset:
        ctx = self.ctx
        raw = dotted(call.func)
        canon = canonical_text(raw, ctx.imports) if raw else None
        norm = self._normalise_self(raw) if raw else None
        args, kwargs = self._args(call, env)
        arg_atoms = EMPTY
        for a in args:
            arg_atoms |= a
        for _, a in kwargs:
            arg_atoms |= a
        if raw is not None:
            match = ctx.match_collective(call, raw, canon)
            if match is not None:
                spec = match.spec
                if spec is None or spec.result == "uniform":
                    return self.atoms.collective(match.group, arg_atoms)
                return frozenset({source("per-rank result of a collective", raw, ctx.path, call.lineno,
                                         (("*", _group_dims(match.group)),))})
            configured, named_source, by_name = ctx.call_text_verdicts(raw, canon, norm)
            if configured is not None:
                return EMPTY if configured == "uniform" else frozenset(
                    {source("rank-local (configured)", raw, ctx.path, call.lineno, _ALL)})
            if raw.rsplit(".", 1)[-1] in _SEEDED_GENERATORS and (call.args or call.keywords):
                return arg_atoms  # a generator seeded alike on every rank draws alike
            if named_source is not None:
                kind, dims = named_source
                return frozenset({source(kind, raw + "()", ctx.path, call.lineno, dims)})
            env_source = self._env_rank(call, canon)
            if env_source is not None:
                return env_source
            if by_name is not None:
                if by_name == "uniform":
                    return EMPTY
                return frozenset({source("rank id", raw + "()", ctx.path, call.lineno, by_name)})
        receiver = self.eval(call.func.value, env) if isinstance(call.func, ast.Attribute) else EMPTY
        fallback = receiver | arg_atoms
        ref = self.resolve_ref(call.func)
        if ref is not None:
            return self.atoms.call(ref, args, kwargs, fallback, ctx.path, call.lineno, raw or "call")
        return fallback

    def _env_rank(self, call: ast.Call, canon: Optional[str]):
        if canon in ("os.environ.get", "os.getenv", "os.environ.__getitem__") and call.args:
            first = call.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value in RANK_ENV_VARS:
                return frozenset({source("rank id", f"environment variable {first.value}", self.ctx.path,
                                   call.lineno, _ALL)})
        return None

    def resolve_ref(self, func: ast.AST) -> Optional[tuple]:
        ctx = self.ctx
        if isinstance(func, ast.Name):
            name = func.id
            if name in self.local_defs:
                return func_ref(ctx.module, self.local_defs[name])
            if name in ctx.module_functions:
                return func_ref(ctx.module, name)
            if name in ctx.module_classes:
                return class_ref(f"{ctx.module}:{name}")
            if name in ctx.imports:
                return qual_ref(ctx.imports[name])
            return None
        if isinstance(func, ast.Attribute):
            value = func.value
            if isinstance(value, ast.Name) and self.self_name and value.id == self.self_name and self.class_key:
                return method_ref(self.class_key, func.attr)
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "super" \
                    and self.class_key:
                return super_ref(self.class_key, func.attr)
            attr = self._self_attr(value)
            if attr is not None:
                return field_method_ref(self.class_key, attr, func.attr)
            text = dotted(value)
            if text and "()" not in text:
                head = text.split(".")[0]
                if head in ctx.imports:
                    return qual_ref(canonical_text(text, ctx.imports) + "." + func.attr)
                if head in ctx.module_classes and "." not in text:
                    return qual_ref(f"{ctx.module}.{text}.{func.attr}")
            if func.attr.startswith("__") or func.attr in _GENERIC_METHODS:
                return None
            return name_ref(func.attr)
        return None

    # -- collecting sites ---------------------------------------------------------
    def _collect(self, graph, closures, envs) -> Variant:
        variant = Variant()
        site_index_of_call: dict = {}
        pending = []
        for node in graph.nodes:
            if node.id not in self.live or node.stmt is None:
                continue
            env = envs.get(node.id, {})
            for call, inline, raw, canon, match in self._node_info(node)[1]:
                    if id(call) in site_index_of_call:
                        continue  # duplicated finally body: first (normal-path) copy wins
                    ref = None if match else self.resolve_ref(call.func)
                    if match is None and ref is None:
                        continue
                    args, kwargs = self._args(call, env)
                    site = Site(Span.of(call), raw or unparse(call.func), canon or raw or "",
                                match.collective if match else None, ref, args, kwargs, ())
                    site.fix = collective_facts(call, raw, match.spec, match.api, self.ctx.is_module_level) \
                        if match else wrapper_facts(call)
                    site_index_of_call[id(call)] = len(variant.sites)
                    variant.sites.append(site)
                    pending.append((site, node, inline, env))
            # field writes and field types
            self._field_writes(graph, node, env, envs, variant)
            if isinstance(node.stmt, ast.Return) and node.kind == cfgmod.STMT and node.stmt.value is not None \
                    and not self._single_rank(graph, node.id):
                variant.returns = variant.returns | self.eval(node.stmt.value, env) | self._implicit(graph, node.id, envs)
        for site, node, inline, env in pending:
            site.ctx_atoms = self._implicit(graph, node.id, envs)
            site.conds = tuple(self._inline_conds(inline, env, site_index_of_call)) + tuple(
                self._node_conds(graph, node, closures.get(node.id, ()), envs, site_index_of_call))
            receiver = site.callee.rsplit(".", 1)[0] if "." in site.callee else ""
            color = self.ctx.comm_colors.get(receiver) if site.collective else None
            if color is not None:
                site.conds = self._conds_uniform_in_color(site.conds, color, graph, node, envs)
            if site.collective and site.collective.group.startswith("group:"):
                members = self.ctx.group_members.get(site.collective.group[len("group:"):])
                if members is not None:
                    site.conds = tuple(c for c in site.conds if not _tests_membership(c.text, members))
        return variant

    def _field_writes(self, graph, node, env, envs, variant) -> None:
        s = node.stmt
        if node.kind != cfgmod.STMT:
            return
        targets = []
        value = None
        if isinstance(s, ast.Assign):
            targets, value = s.targets, s.value
        elif isinstance(s, (ast.AnnAssign, ast.AugAssign)) and s.value is not None:
            targets, value = [s.target], s.value
        if targets:
            atoms = None
            for target in targets:
                for sub in _flatten_targets(target):
                    attr = self._self_attr(sub)
                    base_attr = None
                    if attr is None and isinstance(sub, ast.Subscript):
                        base_attr = self._self_attr(sub.value)
                    if attr is None and base_attr is None:
                        continue
                    if atoms is None:
                        atoms = self.eval(value, env) | self._implicit(graph, node.id, envs)
                    extra = self.eval(sub.slice, env) if base_attr else EMPTY
                    variant.fields.append(FieldWrite(self.class_key, attr or base_attr, atoms | extra, s.lineno))
                    if attr and isinstance(value, ast.Call):
                        ref = self.resolve_ref(value.func)
                        if ref is not None:
                            variant.field_types.append(FieldType(self.class_key, attr, ref))
                    if attr and isinstance(value, ast.Name) and value.id in self.annotations:
                        variant.field_types.append(FieldType(
                            self.class_key, attr, qual_ref(canonical_text(self.annotations[value.id], self.ctx.imports))))
        elif isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
            call = s.value
            if isinstance(call.func, ast.Attribute) and call.func.attr in MUTATORS:
                attr = self._self_attr(call.func.value)
                if attr is not None:
                    atoms = self._implicit(graph, node.id, envs)
                    for arg in call.args:
                        atoms |= self.eval(arg, env)
                    variant.fields.append(FieldWrite(self.class_key, attr, atoms, s.lineno))

    def _conds_uniform_in_color(self, conds, color, graph, node, envs) -> tuple:
        """Members of a communicator made by ``Split(color, ...)`` share the
        color: a test that depends on the rank only through the color is
        uniform over that communicator."""
        texts = {ast.unparse(color)}
        if isinstance(color, ast.Name):
            texts.add(color.id)
        decisions = {}
        for d, _label in self.closures.get(node.id, ()):
            dnode = graph.nodes[d]
            if dnode.kind == cfgmod.TEST and isinstance(dnode.stmt, ast.If):
                decisions[dnode.stmt.test.lineno, unparse(dnode.stmt.test)] = (dnode.stmt.test, envs.get(d, {}))
        saved = self._uniform_texts
        self._uniform_texts = texts
        self._static = {}
        try:
            out = []
            for cond in conds:
                found = decisions.get((cond.line, cond.text))
                if found is not None:
                    atoms = self.eval(found[0], found[1])
                    cond = Cond(cond.kind, atoms, cond.text, cond.line, cond.guard, cond.exit_span, cond.exit_text,
                                cond.body_sites, cond.else_sites, cond.two_sided, cond.alternatives,
                                cond.statement)
                out.append(cond)
            return tuple(out)
        finally:
            self._uniform_texts = saved
            self._static = {}

    def _inline_conds(self, inline, env, site_index_of_call) -> list:
        conds = []
        for kind, expr, owner, side in reversed(inline):
            atoms = self.eval(expr, env)
            text = unparse(expr)
            guard = Span.of(owner)
            body_sites, else_sites, two_sided = (), (), False
            alternatives = None
            if isinstance(owner, ast.IfExp):
                two_sided = True
                body_sites = tuple(site_index_of_call[id(c)] for c, _ in _calls_in_order(owner.body)
                                   if id(c) in site_index_of_call)
                else_sites = tuple(site_index_of_call[id(c)] for c, _ in _calls_in_order(owner.orelse)
                                   if id(c) in site_index_of_call)
                alternatives = (body_sites, else_sites)
            conds.append(Cond(kind, atoms, text, getattr(expr, "lineno", owner.lineno), guard,
                              body_sites=body_sites, else_sites=else_sites, two_sided=two_sided,
                              alternatives=alternatives))
        return conds

    def _node_conds(self, graph, node, closure, envs, site_index_of_call) -> list:
        conds = []
        stmt = node.stmt
        for d, label in closure:
            if label == "never":
                continue
            dnode = graph.nodes[d]
            dstmt = dnode.stmt
            atoms = self._cond_atoms(graph, d, envs)
            if label == "raise" and dnode.kind != cfgmod.STMT:
                atoms = self._exception_atoms(dnode, envs.get(d, {}))
                try_stmt = self._enclosing_try(dstmt)
                text = "exception raised by `" + unparse(dstmt).split("\n")[0] + "`"
                conds.append(Cond("exception", atoms, _short(text), getattr(dstmt, "lineno", 0),
                                  Span.of(try_stmt) if try_stmt is not None else Span.of(dstmt)))
                continue
            if dnode.kind == cfgmod.TEST:
                inside = self.inside(stmt, dstmt) and stmt is not dstmt
                if inside:
                    body_sites = self._sites_in(dstmt.body, site_index_of_call)
                    else_sites = self._sites_in(dstmt.orelse, site_index_of_call)
                    if not dstmt.orelse:
                        partner = self._complement_partner(dstmt)
                        if partner is not None:
                            else_sites = self._sites_in(partner.body, site_index_of_call)
                    conds.append(Cond("branch", atoms, unparse(dstmt.test), dstmt.test.lineno,
                                      Span.of(dstmt), body_sites=body_sites, else_sites=else_sites,
                                      two_sided=True,
                                      alternatives=self._branch_alternatives(dstmt, site_index_of_call)))
                else:
                    exit_stmt = _first_exit(dstmt)
                    conds.append(Cond("early-exit", atoms, unparse(dstmt.test), dstmt.test.lineno,
                                      Span.of(exit_stmt) if exit_stmt else Span.of(dstmt),
                                      exit_span=Span.of(exit_stmt) if exit_stmt else None,
                                      exit_text=unparse(exit_stmt).split("\n")[0] if exit_stmt else "",
                                      two_sided=True,
                                      alternatives=self._branch_alternatives(dstmt, site_index_of_call)))
            elif dnode.kind == cfgmod.LOOP:
                text = unparse(dstmt.test) if isinstance(dstmt, ast.While) else unparse(dstmt.iter)
                line = dstmt.test.lineno if isinstance(dstmt, ast.While) else dstmt.iter.lineno
                if self.inside(stmt, dstmt) and stmt is not dstmt:
                    conds.append(Cond("loop", atoms, text, line, Span.of(dstmt),
                                      statement="while" if isinstance(dstmt, ast.While) else "for"))
                else:
                    exit_stmt = _first_exit(dstmt, loop=True)
                    conds.append(Cond("early-exit", atoms, text, line,
                                      Span.of(exit_stmt) if exit_stmt else Span.of(dstmt),
                                      exit_span=Span.of(exit_stmt) if exit_stmt else None,
                                      exit_text=unparse(exit_stmt).split("\n")[0] if exit_stmt else ""))
            elif dnode.kind == cfgmod.ASSERT:
                conds.append(Cond("early-exit", atoms, unparse(dstmt.test), dstmt.lineno, Span.of(dstmt),
                                  exit_span=Span.of(dstmt), exit_text=unparse(dstmt).split("\n")[0]))
            elif dnode.kind == cfgmod.CASE:
                text = unparse(dstmt.pattern)
                if self.inside(stmt, dstmt):
                    conds.append(Cond("branch", atoms, f"case {text}", dstmt.pattern.lineno, Span.of(dstmt.pattern)))
                else:
                    exit_stmt = _first_exit_in(dstmt.body)
                    conds.append(Cond("early-exit", atoms, f"case {text}", dstmt.pattern.lineno,
                                      Span.of(exit_stmt) if exit_stmt else Span.of(dstmt.pattern),
                                      exit_span=Span.of(exit_stmt) if exit_stmt else None,
                                      exit_text=unparse(exit_stmt).split("\n")[0] if exit_stmt else ""))
            else:  # a statement with exception edges
                if dstmt is None:
                    continue
                try_stmt = self._enclosing_try(dstmt)
                text = "exception raised by `" + unparse(dstmt).split("\n")[0] + "`"
                conds.append(Cond("exception", atoms, _short(text), getattr(dstmt, "lineno", 0),
                                  Span.of(try_stmt) if try_stmt is not None else Span.of(dstmt)))
        return conds

    # -- path enumeration for balanced branches --------------------------------------
    MAX_PATHS = 16

    def _ordered_sites(self, node, site_index_of_call) -> tuple:
        found = [sub for sub in fast_walk(node) if isinstance(sub, ast.Call) and id(sub) in site_index_of_call]
        found.sort(key=lambda c: (c.lineno, c.col_offset))
        return tuple(site_index_of_call[id(c)] for c in found)

    def _paths(self, stmts, idx):
        """Possible (site sequence, left the block) pairs through statements."""
        paths = [((), False)]
        for stmt in stmts:
            live = [p for p in paths if not p[1]]
            if not live:
                break
            ext = self._stmt_paths(stmt, idx)
            if ext is None:
                return None
            paths = [p for p in paths if p[1]] + [(seq + e, term) for seq, _ in live for e, term in ext]
            if len(paths) > self.MAX_PATHS:
                return None
        return paths

    def _stmt_paths(self, s, idx):
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return [((), False)]
        if isinstance(s, ast.If):
            prefix = self._ordered_sites(s.test, idx)
            a = self._paths(s.body, idx)
            b = self._paths(s.orelse, idx)
            if a is None or b is None:
                return None
            return [(prefix + seq, term) for seq, term in a + b]
        if isinstance(s, (ast.Return, ast.Raise)):
            return [(self._ordered_sites(s, idx), True)]
        if isinstance(s, (ast.Break, ast.Continue)):
            return [((), True)]
        if isinstance(s, (ast.For, ast.AsyncFor, ast.While)):
            inner = self._ordered_sites(s, idx)
            head = self._ordered_sites(s.iter if not isinstance(s, ast.While) else s.test, idx)
            return None if len(inner) > len(head) else [(head, False)]
        if isinstance(s, (ast.With, ast.AsyncWith)):
            prefix = tuple(i for item in s.items for i in self._ordered_sites(item.context_expr, idx))
            body = self._paths(s.body, idx)
            return None if body is None else [(prefix + seq, term) for seq, term in body]
        if isinstance(s, ast.Try) or type(s).__name__ == "TryStar":
            body = self._paths(list(s.body) + list(s.orelse) + list(s.finalbody), idx)
            if body is None or any(self._ordered_sites(h, idx) for h in s.handlers):
                return None
            return body
        if isinstance(s, ast.Match):
            prefix = self._ordered_sites(s.subject, idx)
            out = []
            for case in s.cases:
                sub = self._paths(case.body, idx)
                if sub is None:
                    return None
                out += [(prefix + seq, term) for seq, term in sub]
            return out + [(prefix, False)]
        return [(self._ordered_sites(s, idx), False)]

    def _branch_alternatives(self, stmt: ast.If, idx):
        """Site sequences of both sides of an ``if``; when the taken side
        always leaves the block and there is no ``else``, the rest of the
        block is the other side (``if c: return f(x)`` / ``return f(y)``).
        Computed once per ``if`` and variant (every site under it asks)."""
        key = id(stmt)
        cached = self._sites_in_cache.get(("alternatives", key))
        if cached is not None and cached[0] is stmt:
            return cached[1]
        result = self._branch_alternatives_uncached(stmt, idx)
        self._sites_in_cache[("alternatives", key)] = (stmt, result)
        return result

    def _branch_alternatives_uncached(self, stmt: ast.If, idx):
        body = self._paths(stmt.body, idx)
        if body is None:
            return None
        if stmt.orelse:
            other = self._paths(stmt.orelse, idx)
        else:
            partner = self._complement_partner(stmt)
            if partner is not None:
                other = self._paths(partner.body, idx)
            elif body and all(term for _, term in body):
                block = self.blocks.get(id(stmt)) or []
                position = next((i for i, b in enumerate(block) if b is stmt), None)
                rest = block[position + 1:] if position is not None else []
                other = self._paths(rest, idx)
            else:
                other = [((), False)]
        if other is None:
            return None
        return tuple(seq for seq, _ in body + other)

    def _complement_partner(self, stmt: ast.If):
        """A sibling ``if`` (no else) in the same block whose test is the
        negation of this one's: together they issue their collectives on
        every rank, in the same order, like an if/else."""
        partners = self.__dict__.setdefault("_partners", {})
        found = partners.get(id(stmt), stmt)
        if found is not stmt:
            return found
        block = self.blocks.get(id(stmt))
        found = None
        if block is not None:
            negated = _negation_text(stmt.test)
            own = self._test_text(stmt)
            for other in block:
                if other is stmt or not isinstance(other, ast.If) or other.orelse:
                    continue
                if self._test_text(other) == negated or _negation_text(other.test) == own:
                    found = other
                    break
        partners[id(stmt)] = found
        return found

    def _test_text(self, stmt: ast.If) -> str:
        texts = self.__dict__.setdefault("_test_texts", {})
        text = texts.get(id(stmt))
        if text is None:
            text = texts[id(stmt)] = ast.unparse(stmt.test)
        return text

    def _enclosing_try(self, stmt):
        parent = self.parents.get(id(stmt))
        while parent is not None:
            if isinstance(parent, ast.Try) or type(parent).__name__ == "TryStar":
                return parent
            parent = self.parents.get(id(parent))
        return None

    def _sites_in(self, stmts, site_index_of_call) -> tuple:
        key = id(stmts)
        cached = self._sites_in_cache.get(key)
        if cached is not None and cached[0] is stmts:
            return cached[1]
        result = self._sites_in_uncached(stmts, site_index_of_call)
        self._sites_in_cache[key] = (stmts, result)
        return result

    def _sites_in_uncached(self, stmts, site_index_of_call) -> tuple:
        out = []
        for stmt in stmts:
            for sub in fast_walk(stmt):
                if isinstance(sub, ast.Call) and id(sub) in site_index_of_call:
                    out.append(site_index_of_call[id(sub)])
        return tuple(sorted(out))


#: Calls whose failure (OSError and friends) comes from one rank's own disk,
#: network or process table: a function making one may raise on some ranks.
_LOCAL_IO_CALLS = frozenset({
    "open", "makedirs", "mkdir", "remove", "unlink", "rename", "replace", "rmtree", "copyfile",
    "read_text", "write_text", "read_bytes", "write_bytes", "urlopen", "check_call", "check_output",
    "connect", "getaddrinfo",
})

_GENERIC_METHODS = {
    "get", "set", "update", "run", "step", "forward", "close", "start", "stop", "wait", "join", "item",
    "append", "extend", "pop", "add", "remove", "clear", "copy", "keys", "values", "items", "format",
    "split", "strip", "read", "write", "send", "recv", "put", "to", "cuda", "cpu", "view", "reshape",
    "size", "numel", "tolist", "sum", "mean", "max", "min", "any", "all", "info", "debug", "warning",
    "error", "exception", "call", "apply", "fn", "func", "main", "init", "reset", "flush", "sort",
    "index", "count", "encode", "decode", "result", "done", "cancel", "submit", "execute", "fetch",
    "state_dict", "load_state_dict", "save", "load", "sync", "synchronize", "wrapper", "inner", "_fn",
    "setup", "build", "create", "process", "handle", "update_state", "backward", "__call__", "_run",
}


def _group_dims(group: str) -> frozenset:
    from ..presets import group_span

    return group_span(group)


_SIZE_CALLS = {"get_world_size", "Get_size", "size", "get_size", "world_size"}


def _is_size_expr(expr: ast.expr) -> bool:
    if isinstance(expr, ast.Call):
        name = dotted(expr.func) or ""
        last = name.rsplit(".", 1)[-1]
        return last in _SIZE_CALLS or (last.startswith("get_") and size_name_is_uniform(last[4:])) \
            or (last.startswith("_") and size_name_is_uniform(last.lstrip("_")))
    text = dotted(expr)
    if not text:
        return False
    last = text.rsplit(".", 1)[-1]
    return last in ("size", "nranks", "world_size") or size_name_is_uniform(last)


def _single_rank_side(test: ast.expr):
    """The branch label (True/False) of a test that holds only when a group
    has one rank: ``size == 1`` -> True, ``world_size > 1`` -> False."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _single_rank_side(test.operand)
        return None if inner is None else not inner
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return None
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if isinstance(left, ast.Constant) and _is_size_expr(right):
        mirror = {ast.Lt: ast.Gt, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.GtE: ast.LtE, ast.Eq: ast.Eq, ast.NotEq: ast.NotEq}
        if type(op) not in mirror:
            return None
        left, op, right = right, mirror[type(op)](), left
    if not (_is_size_expr(left) and isinstance(right, ast.Constant) and isinstance(right.value, int)):
        return None
    k = right.value
    single_when_true = {(ast.Eq, 1), (ast.LtE, 1), (ast.Lt, 2)}
    multi_when_true = {(ast.Gt, 1), (ast.GtE, 2), (ast.NotEq, 1)}
    if (type(op), k) in single_when_true:
        return True
    if (type(op), k) in multi_when_true:
        return False
    return None


def _pairwise(targets, value):
    """``a, b = x, y`` -> [(a, x), (b, y)]; None for anything else."""
    if len(targets) != 1 or not isinstance(value, (ast.Tuple, ast.List)):
        return None
    target = targets[0]
    if not isinstance(target, (ast.Tuple, ast.List)) or len(target.elts) != len(value.elts):
        return None
    if any(isinstance(e, ast.Starred) for e in list(target.elts) + list(value.elts)):
        return None
    return list(zip(target.elts, value.elts))


_NEGATED_OPS = {ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE,
                ast.LtE: ast.Gt, ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In}


def _negation_text(test: ast.expr) -> Optional[str]:
    """Source text of the logical negation of a simple test, or None."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return ast.unparse(test.operand)
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _NEGATED_OPS:
        flipped = ast.Compare(left=test.left, ops=[_NEGATED_OPS[type(test.ops[0])]()], comparators=test.comparators)
        return ast.unparse(flipped)
    return ast.unparse(ast.UnaryOp(op=ast.Not(), operand=test))


def _flatten_targets(target):
    if isinstance(target, (ast.Tuple, ast.List)):
        for elt in target.elts:
            yield from _flatten_targets(elt)
    elif isinstance(target, ast.Starred):
        yield from _flatten_targets(target.value)
    else:
        yield target


def _tests_membership(text: str, members: str) -> bool:
    """``rank in ranks`` (or ``not in``) where ``ranks`` made the collective's
    group with ``new_group(ranks)``: only the group's members get past it,
    which is exactly who must enter a collective over that group."""
    for op in (" not in ", " in "):
        left, found, right = text.partition(op)
        if found:
            return right.strip() == members and "rank" in left.lower()
    return False


def _first_exit_in(stmts, loop=False):
    for stmt in stmts:
        found = _first_exit(stmt, loop)
        if found is not None:
            return found
    return None


def _first_exit(stmt, loop=False):
    """The first return/raise/continue/break inside a statement (break and
    continue only when they leave this level, not an inner loop)."""
    if isinstance(stmt, (ast.Return, ast.Raise)) or cfgmod.is_process_exit(stmt):
        return stmt
    if isinstance(stmt, (ast.Continue, ast.Break)):
        return stmt
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return None
    inner_loop = isinstance(stmt, (ast.For, ast.AsyncFor, ast.While))
    for name in ("body", "orelse", "handlers", "finalbody", "cases"):
        for child in getattr(stmt, name, None) or []:
            found = _first_exit(child, loop)
            if found is None:
                continue
            if inner_loop and isinstance(found, (ast.Continue, ast.Break)) and not loop:
                continue
            return found
    return None


# --------------------------------------------------------------------------
# File level
# --------------------------------------------------------------------------


def _walk_defs(ctx: Context, body, prefix: str, class_key, out_funcs, out_classes, in_function):
    """Yield extractors for every function in a body (nested ones included)."""
    local_defs = {}
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            qual = f"{prefix}{stmt.name}"
            local_defs[stmt.name] = qual
    for stmt in _iter_nested_defs(body):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            qual = f"{prefix}{stmt.name}"
            is_method = class_key is not None and not in_function
            decorators = {dotted(d) for d in stmt.decorator_list}
            is_static = "staticmethod" in decorators
            nested = {}
            for inner in _iter_nested_defs(stmt.body):
                if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    nested[inner.name] = f"{qual}.<locals>.{inner.name}"
            visible = dict(local_defs if in_function else {})
            visible.update(nested)
            extractor = FunctionExtractor(ctx, stmt, qual, class_key if is_method else None,
                                          is_method, is_static, visible)
            out_funcs.append(extractor)
            _walk_defs(ctx, stmt.body, f"{qual}.<locals>.", class_key if is_method else None,
                       out_funcs, out_classes, True)
        elif isinstance(stmt, ast.ClassDef):
            qual = f"{prefix}{stmt.name}"
            key = f"{ctx.module}:{qual}"
            bases = []
            for base in stmt.bases:
                text = dotted(base)
                if not text:
                    continue
                if text in ctx.module_classes:
                    bases.append(class_ref(f"{ctx.module}:{text}"))
                else:
                    bases.append(qual_ref(canonical_text(text, ctx.imports)))
            methods = {}
            for inner in stmt.body:
                if isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    methods[inner.name] = f"{ctx.module}:{qual}.{inner.name}"
            out_classes.append(ClassFacts(key, stmt.name, ctx.module, tuple(bases), methods))
            _walk_defs(ctx, stmt.body, f"{qual}.", key, out_funcs, out_classes, False)


def _iter_nested_defs(body):
    """Definitions directly in a body, including those under if/try/with."""
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield stmt
        elif isinstance(stmt, (ast.If, ast.Try, ast.With, ast.AsyncWith, ast.For, ast.While)) \
                or type(stmt).__name__ == "TryStar":
            for name in ("body", "orelse", "finalbody"):
                yield from _iter_nested_defs(getattr(stmt, name, None) or [])
            for handler in getattr(stmt, "handlers", None) or []:
                yield from _iter_nested_defs(handler.body)


def extract_file_facts(path: str, data: bytes, settings: Settings, knowledge: Knowledge,
                       tree: Optional[ast.Module] = None, module: Optional[str] = None,
                       deep_names: Optional[set] = None, already_deep: Optional[frozenset] = None) -> FileFacts:
    """Parse (unless given a tree) and extract one file's facts.  Errors
    (syntax, encoding) come back in ``FileFacts.error``; never raises for bad
    input.

    ``already_deep``: positions of the functions an earlier extraction of the
    same bytes analysed in depth.  Only functions that are deep now and were
    not then are extracted, and the result is a patch for
    :func:`merge_partial` (the other summaries do not depend on
    ``deep_names``)."""
    module = module or module_name_for(path)
    facts = FileFacts(path=path, module=module)
    if tree is None:
        try:
            tree = ast.parse(data, filename=path)
        except SyntaxError as exc:
            facts.error = f"syntax error: {exc.msg}"
            facts.error_line = exc.lineno or 1
            facts.error_column = exc.offset or 1
            return facts
        except (ValueError, UnicodeDecodeError) as exc:
            facts.error = f"cannot decode source: {exc}"
            return facts
        except RecursionError:
            facts.error = "source nests too deeply to parse"
            return facts
        except MemoryError:
            facts.error = "source too large to parse"
            return facts
    ctx = Context(path, module, tree, knowledge, settings, os.path.basename(path) == "__init__.py")
    ctx.deep_names = set(deep_names or ())
    facts.imports = ctx.imports
    extractors: list = []
    classes: list = []
    try:
        _walk_defs(ctx, tree.body, "", None, extractors, classes, False)
        module_extractor = FunctionExtractor(ctx, tree, "<module>", None, False, False, {
            n: n for n in ctx.module_functions})
        facts.classes = classes
        everyone = extractors + [module_extractor]
        scans = [extractor.scan_calls() for extractor in everyone]
        deep_names = set(ctx.deep_names)
        deep = [has_collective for _, has_collective in scans]
        changed = True
        while changed:  # functions of this file that call a deep one are deep too
            changed = False
            for i, extractor in enumerate(everyone):
                if deep[i]:
                    continue
                names = scans[i][0]
                if names & deep_names or any(_fn(n, w) for w in ctx.collective_wild for n in names):
                    deep[i] = True
                    changed = True
                    short = extractor.qualname.rsplit(".", 1)[-1]
                    if not short.startswith("<"):
                        deep_names.add(short)
            for i, extractor in enumerate(everyone):
                if deep[i]:
                    short = extractor.qualname.rsplit(".", 1)[-1]
                    if short not in deep_names and not short.startswith("<"):
                        deep_names.add(short)
                        changed = True
        if not any(deep):
            # Nothing here can reach a collective: keep the class structure
            # (for method resolution) and skip the value summaries, which only
            # matter next to code that does.
            facts.defined_names = {e.qualname.rsplit(".", 1)[-1] for e in extractors}
            facts.skipped = True
            facts.called_names = frozenset().union(*(names for names, _ in scans))
            return facts
        if already_deep is not None:
            positions = tuple(i for i in range(len(everyone)) if deep[i] and i not in already_deep)
            facts.partial = positions
            for i in positions:
                func_facts = everyone[i].extract(True, scans[i][0])
                facts.functions.append(func_facts)
                if any(site.collective for v in func_facts.variants.values() for site in v.sites):
                    facts.collective_functions.add(everyone[i].qualname.rsplit(".", 1)[-1])
                if everyone[i] is module_extractor:
                    facts.globals = module_extractor.final_globals()
            return facts
        for i, extractor in enumerate(everyone):
            func_facts = extractor.extract(deep[i], scans[i][0])
            facts.functions.append(func_facts)
            facts.defined_names.add(extractor.qualname.rsplit(".", 1)[-1])
            if any(site.collective for v in func_facts.variants.values() for site in v.sites):
                facts.collective_functions.add(extractor.qualname.rsplit(".", 1)[-1])
            if extractor is module_extractor:
                facts.globals = module_extractor.final_globals()
    except RecursionError:
        facts.error = "source nests too deeply to analyse"
        facts.functions = []
    return facts
