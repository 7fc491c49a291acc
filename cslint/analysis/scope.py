"""What one module says about the names it uses: its module name, its imports,
the communicators it makes, and what a call's text alone says (a collective
and over which group, a preset source, a rank or size getter).  One
:class:`ModuleContext` per extracted file, shared by its functions."""

from __future__ import annotations

import ast
import os
from fnmatch import fnmatchcase
from typing import Optional

from ..config import Settings, matches_any, pattern_matches, text_matches
from ..presets import KIND_RANK_ID, Knowledge
from ..presets.rank_names import rank_name_dims, size_name_is_uniform
from .astwalk import BLOCKS_OF, walked
from .modulenames import module_name_for
from .results import AtomBuilder
from .exits import CallerCatches, exit_exceptions
from .collectivegroups import CollectiveGroups
from .communicators import Communicators
from .entries import positional_fields, scanned_entry_nodes
from .configfiles import read_configuration
from .packagefiles import in_package
from .shapes import returned_tuple_length, returns_computed_key_dicts, returns_one_dict_shape, returns_only_lists
from .bindings import assigned_names, target_names
from .grouptests import is_size_expr
from .ownstructure import returns_own_structure
from .syntax import dotted, iter_statements, top_level_definitions
from .sizereads import SizeReads
from .vocabulary import ALL_MODES_ALL_DIMS, ELEMENT_ADDERS, looks_like_communicator


#: references the whole-tree pass resolves by what their receiver holds (``self.sharder.shard()``, ``engine.step()``)
_RESOLVED_BY_RECEIVER = frozenset({"fieldmethod", "typed"})

def _returns_own_structure(function) -> bool:
    return returns_own_structure(function, ELEMENT_ADDERS)


def _returns_shape(ctx, ref, known_shapes: dict, test) -> bool:
    """Whether ``ref`` is a function or method of ``ctx``'s module whose
    definition passes ``test`` (each looked at once, on first use); a method
    called on an object the function built of one class of the module
    (``engine = cls(...)``, ``engine = Engine(...)``, then ``engine.m()``: a
    receiver whose only type term is that class) is that class's method."""
    tag = ref.tag if ref is not None else None
    if tag == "typed" and len(ref.terms) == 1 and ref.terms[0][0] == "class":
        tag, class_key = "method", ref.terms[0][1]
    else:
        class_key = ref.class_key if tag == "method" or tag == "super" else None
    if tag == "func":
        if ref.module != ctx.module:
            return False
        qualname = ref.qualname
    elif tag == "method" or tag == "super":
        module, _, cls = class_key.partition(":")
        if module != ctx.module:
            return False
        qualname = f"{cls}.{ref.name}"
    else:
        return False
    known = known_shapes.get(qualname)
    if known is None:
        function = ctx.definitions().get(qualname)
        known = known_shapes[qualname] = function is not None and test(function)
    return known


def _relative_outside_packages(path: str, level: int, module: Optional[str], names) -> Optional[dict]:
    """A relative import in a file that no package holds (a tree shipped
    without ``__init__.py`` files): the names it imports, each named the
    way the file that defines it is analysed (see :func:`module_name_for`),
    or None when no such file is there."""
    directory = os.path.dirname(os.path.abspath(path))
    for _ in range(level - 1):
        directory = os.path.dirname(directory)
    target = os.path.join(directory, *module.split(".")) if module else directory
    found: dict = {}
    if os.path.isfile(target + ".py"):
        base = module_name_for(target + ".py")
        for alias in names:
            found[alias.asname or alias.name] = f"{base}.{alias.name}"
        return found
    for alias in names:
        candidate = os.path.join(target, alias.name + ".py")
        if not os.path.isfile(candidate):
            return None
        found[alias.asname or alias.name] = module_name_for(candidate)
    return found


def collect_imports(tree: ast.Module, module: str, is_package: bool,
                     communicators: Optional[Communicators] = None, path: Optional[str] = None) -> dict:
    """The module's import table: local name -> the dotted name it stands for.

    A file whose name the run settled (two files of the run that the package
    structure names alike each get a prefix, ``a.worker`` and ``b.worker``:
    :meth:`cslint.engine.discovery.ModuleNames.settle`) imports its siblings
    under their settled names too: ``import worker`` in ``a/main.py`` is
    ``a.worker``, the file Python finds first from ``a/``."""
    natural = module_name_for(path) if path is not None else module
    if module != natural and module.endswith("." + natural):
        table = _collect_imports(tree, natural, is_package, communicators, path)
        prefix = module[: -len(natural) - 1]
        root = import_root(path, natural)
        return {local: f"{prefix}.{target}" if _names_a_module_under(root, target) else target
                for local, target in table.items()}
    return _collect_imports(tree, module, is_package, communicators, path)


def import_root(path: str, module: str) -> str:
    """The directory ``path`` is imported from as the dotted ``module``: the
    one Python puts on ``sys.path`` for that name."""
    directory = os.path.dirname(os.path.abspath(path))
    levels = module.count(".") + (1 if os.path.basename(path) == "__init__.py" else 0)
    for _ in range(levels):
        directory = os.path.dirname(directory)
    return directory


def _names_a_module_under(root: str, target: str) -> bool:
    head = os.path.join(root, target.split(".")[0])
    return os.path.isfile(head + ".py") or os.path.isdir(head)


def _collect_imports(tree: ast.Module, module: str, is_package: bool,
                     communicators: Optional[Communicators], path: Optional[str]) -> dict:
    table: dict = {}
    # every statement of the module (iter_statements' walk written out: no generator resumed per statement)
    stack = list(reversed(getattr(tree, "body", None) or []))
    blocks_of = BLOCKS_OF
    while stack:
        node = stack.pop()
        t = type(node)  # (every statement of the module: no isinstance)
        for name in blocks_of[t]:
            block = getattr(node, name)
            if block:
                stack.extend(reversed(block))
        if t is ast.Assign or t is ast.AnnAssign or t is ast.AugAssign:
            if communicators is not None:
                if t is ast.Assign and type(node.value) is ast.Call:
                    communicators.note(node)
                communicators.note_fields(node)
            continue
        if t is ast.Import:
            for alias in node.names:
                if alias.asname:
                    table[alias.asname] = alias.name
                else:
                    first = alias.name.split(".")[0]
                    table.setdefault(first, first)
        elif t is ast.ImportFrom:
            base = node.module or ""
            if node.level and path is not None and "." not in module and not is_package:
                names = [alias for alias in node.names if alias.name != "*"]
                found = _relative_outside_packages(path, node.level, node.module, names)
                if found is not None:
                    table.update(found)
                    continue
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


#: what :meth:`ModuleContext.attribute_text_verdict` says of a uniform value
UNIFORM_TEXT = "uniform"
_UNKNOWN = object()  # no verdict kept yet (None is a verdict)


def canonical_text(text: Optional[str], imports: dict) -> Optional[str]:
    if not text:
        return text
    head, _, rest = text.partition(".")
    if head in imports:
        return imports[head] + ("." + rest if rest else "")
    return text


#: statements whose bodies run at module level when they stand there
_MODULE_BLOCKS = (ast.If, ast.Try, ast.With, ast.For, ast.While, ast.Match) + tuple(
    getattr(ast, name) for name in ("TryStar",) if hasattr(ast, name))


def block_defined_functions(tree: ast.Module, module_globals: set) -> frozenset:
    """The names module-level blocks (:data:`_MODULE_BLOCKS`, not the top level itself) define with ``def`` and no
    module-level statement binds otherwise (``module_globals``, what :func:`module_level_names` gives: ``probe =
    os.path.exists`` after the blocks; a loop's or a ``with``'s target): such a name may hold something no
    definition gives, so a call of it is no call of the definitions."""
    names = set()
    blocks = [stmt for node in tree.body if isinstance(node, _MODULE_BLOCKS) for stmt in _block_statements(node)]
    for node in blocks:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, _MODULE_BLOCKS):
            blocks += _block_statements(node)
    if names:
        names -= module_globals | _module_level_targets(tree)
    return frozenset(names)


def _module_level_targets(tree: ast.Module) -> set:
    """The names module-level loops and ``with`` statements bind, through the module's blocks too."""
    names = set()
    blocks = list(tree.body)
    for node in blocks:
        t = type(node)
        if t is ast.For:
            names.update(target_names(node.target))
        elif t is ast.With:
            for item in node.items:
                if item.optional_vars is not None:
                    names.update(target_names(item.optional_vars))
        if isinstance(node, _MODULE_BLOCKS):
            blocks += _block_statements(node)
    return names


def _block_statements(node) -> list:
    return [*getattr(node, "body", ()), *getattr(node, "orelse", ()), *getattr(node, "finalbody", ()),
            *[s for h in getattr(node, "handlers", ()) for s in h.body],
            *[s for c in getattr(node, "cases", ()) for s in c.body]]


def module_level_names(tree: ast.Module) -> set:
    """The names a module assigns at module level, through its own blocks too: ``try: X = f() except E: X = None``
    binds a module variable as ``X = f()`` at the top does (else a function's read of ``X`` read nothing)."""
    names = set()
    blocks = list(tree.body)
    for node in blocks:
        names.update(assigned_names(node))
        if isinstance(node, _MODULE_BLOCKS):
            blocks += _block_statements(node)
    return names


def _preset_collective_tails(knowledge: Knowledge) -> frozenset:
    """The last names of the presets' collective patterns: the same for
    every file of a run, worked out once (kept on the knowledge)."""
    found = knowledge.__dict__.get("_collective_pattern_tails")
    if found is None:
        found = knowledge.__dict__["_collective_pattern_tails"] = frozenset(
            spec.pattern.rsplit(".", 1)[-1] for spec in knowledge.collectives)
    return found


class ModuleContext(CollectiveGroups):
    """Module-wide state shared by the function extractors."""

    def returns_tuples(self, ref) -> bool:
        """Whether ``ref`` is a function or method of this module each of whose ``return`` statements with a value
        writes out a tuple of one length (``return count, agreed``): its elements can be read apart.  Each function
        is looked at once, when a caller first unpacks it.  A name imported from the project's own package, or a
        method found by what the receiver holds (``ws, rank = get_ring_ctx()``, ``self.splitter.split(batch)``),
        the whole-tree pass reads by position where its returns write out one tuple shape, else whole."""
        if ref is not None and (ref.tag in _RESOLVED_BY_RECEIVER or ref.tag == "qual"
                                and ref.dotted.partition(".")[0] == self.module.partition(".")[0]):
            return True
        return _returns_shape(self, ref, self._tuple_lengths, returned_tuple_length) > 0  # (one table: the length)

    def returned_tuple_length(self, ref) -> int:
        """The length of the tuple each ``return`` with a value of ``ref``, a function or method of this module,
        writes out (``shapes.returned_tuple_length``); 0 where they do not, or ``ref`` is not of this module."""
        return _returns_shape(self, ref, self._tuple_lengths, returned_tuple_length) or 0

    def returns_dicts(self, ref):
        """The keys where each ``return`` with a value of ``ref``, a function or method of this module, writes out
        a dict display with those constant keys (``shapes.returns_one_dict_shape``): ``f()["key"]`` reads one."""
        return _returns_shape(self, ref, self._dict_returns, returns_one_dict_shape)

    def returns_keyed_values(self, ref) -> bool:
        """Whether every ``return`` of ``ref`` writes out a display with computed keys (``entries.values_own``)."""
        return _returns_shape(self, ref, self.__dict__.setdefault("_keyed", {}), returns_computed_key_dicts)

    def returns_lists(self, ref) -> bool:
        """Whether every ``return`` of ``ref``, of this module, writes out a list (``shapes.returns_only_lists``)."""
        return _returns_shape(self, ref, self._list_returns, returns_only_lists)

    def returns_own_structure(self, ref) -> bool:
        """Whether some ``return`` of ``ref``, of this module, hands back a container whose own structure is kept
        apart (``ownstructure.returns_own_structure``): a read of the result's own reads that part (``callrefs.OWN_PART``)."""
        return _returns_shape(self, ref, self._own_returns, _returns_own_structure)

    def definitions(self) -> dict:
        """The module's functions and methods by qualified name (``syntax.top_level_definitions``), read once."""
        if self._definitions is None:
            self._definitions = top_level_definitions(self.tree)
        return self._definitions

    def __init__(self, path: str, module: str, tree: ast.Module, knowledge: Knowledge,
                 settings: Settings, is_package: bool):
        self.path = path
        self.module = module
        self.tree = tree
        self.knowledge = knowledge
        #: the world whose words name this module's groups (a preset's world scoped to its package, or the run's)
        self.world = knowledge.world_of(module)
        self.settings = settings
        communicators = Communicators()
        self.imports = collect_imports(tree, module, is_package, communicators, path)
        self.comm_names = communicators.names
        self.comm_colors = communicators.colors
        self.group_members = communicators.members
        self.group_member_texts = frozenset(communicators.member_texts)
        self.field_writes = communicators.field_writes
        self.name_writes = communicators.name_writes
        self.atoms = AtomBuilder()  # the call/collective result atoms of this file
        #: class key -> the fields its methods assign a container to (filled on first use)
        self.container_fields: dict = {}
        #: id(node) -> container names of each definition (containers.container_index, on first use)
        self.container_index = None
        self.module_functions = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        #: the names of the module-level functions a block defines (``if HAVE_X: def probe(): ...``), a call of which
        #: runs one of the definitions (``facts.alternative_definitions``)
        self.module_globals = module_level_names(tree)
        self.block_functions = block_defined_functions(tree, self.module_globals)
        self.module_classes = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
        #: qualified names of the file's functions that call a collective
        #: themselves (set by the extraction once it has scanned them)
        self.issuing_functions: frozenset = frozenset()
        self._tuple_lengths: dict = {}  # qualname -> the length of the tuples it returns, 0: none (returns_tuples)
        self._own_returns: dict = {}  # qualname -> returns_own_structure
        self._dict_returns: dict = {}  # qualname -> returns_dicts
        self._list_returns: dict = {}  # qualname -> returns_only_lists
        self._definitions = None  # qualname -> function node, on first use (returns_tuples)
        #: class key -> the canonical dotted texts of its bases (filled as the classes are walked)
        self.class_bases: dict = {}
        self.class_body_names: dict = {}  # class key -> the names its body binds (lackednames.class_body_names)
        #: ``unhandled-exceptions``: "hang" when an exception that leaves one rank is not torn down
        self.exceptions_hang = (settings.unhandled_exceptions or knowledge.unhandled_exceptions) == "hang"
        self.user_collectives = [c for c in settings.collectives]
        self._collective_cache: dict = {}
        # what a call's text alone says follows from the text, the presets and
        # the two configured pattern lists: shared by the files of a run
        # (in a worker) that are configured alike
        self._text_verdicts: dict = knowledge.__dict__.setdefault("_call_text_verdicts", {}).setdefault(
            (tuple(settings.uniform), tuple(settings.rank_local)), {})
        # (a rank read off a group object follows the group the module names it by: in a
        # scoped world's package, through this file's own assignments too)
        self._attribute_verdicts: dict = knowledge.__dict__.setdefault("_attribute_text_verdicts", {}).setdefault(
            (tuple(settings.uniform), tuple(settings.rank_local), self.path if self.world.words else None), {})
        self.deep_names: set = set()
        #: (the module body's FunctionInfo, {id(definition): its FunctionInfo}) once the extraction has
        #: run the call scan of each (facts.extract_file_facts); None until then, or where it runs only some
        self.scanned = None
        #: whether an expression of the file may bind a name (``name := value``):
        #: False once its source is known to hold no ``:=`` (facts.py)
        self.may_hold_walrus = True
        #: whether such a binding may be of a size-named name (sizereads.walrus_may_bind_size; facts.py)
        self.walrus_binds_size = True
        #: whether the file's source may make a set (orders.py): False once
        #: it is known to hold no ``set(``, ``frozenset(``, set comprehension
        #: or ``Set[`` annotation (facts.py)
        self.may_make_sets = True
        #: whether the source may fill a list with pieces of one value; the lists it fills so (spans.PieceLists)
        self.may_cut_pieces, self.piece_lists = True, None
        tails = set(_preset_collective_tails(knowledge))
        for pattern in self.user_collectives:
            tails.add(pattern.split(":", 1)[0].rsplit(".", 1)[-1])
        self.collective_tails = {t for t in tails if "*" not in t}
        self.collective_wild = [t for t in tails if "*" in t]
        # callee name -> whether a wildcard collective name matches it: the
        # same few hundred names come back in every function of a run
        self._wild_names: dict = knowledge.__dict__.setdefault("_wild_collective_names", {}).setdefault(
            tuple(sorted(self.collective_wild)), {})

    @property
    def exit_exceptions(self) -> frozenset:
        """``SystemExit`` and the file's subclasses of it: raising one ends the
        process like ``sys.exit`` (:func:`~cslint.analysis.exits.exit_exceptions`)."""
        found = self.__dict__.get("_exit_exceptions")
        if found is None:
            found = self.__dict__["_exit_exceptions"] = exit_exceptions(self.tree)
        return found

    @property
    def caller_catches(self) -> CallerCatches:
        """Which functions of the module a caller in it catches the raises of
        (:class:`~cslint.analysis.exits.CallerCatches`, worked out on first asking)."""
        found = self.__dict__.get("_caller_catches")
        if found is None:
            imports = self.imports
            package = self.module.partition(".")[0]
            found = self.__dict__["_caller_catches"] = CallerCatches(
                self.tree, frozenset(local for local, target in imports.items() if target.partition(".")[0] != package),
                frozenset(local if target == "contextlib.suppress" else f"{local}.suppress"
                          for local, target in imports.items() if target in ("contextlib", "contextlib.suppress")))
        return found

    def is_module_level(self, name: str) -> bool:
        """Whether a name is bound by an import or a module-level assignment."""
        return name in self.imports or name in self.module_globals

    def calls_a_wild_collective(self, names) -> bool:
        """Whether one of the callee ``names`` matches a collective named
        with a wildcard (``*gather_from_sequence_parallel_region``)."""
        wild = self.collective_wild
        if not wild:
            return False
        known = self._wild_names
        for name in names:
            matched = known.get(name)
            if matched is None:
                matched = known[name] = pattern_matches(name, wild)
            if matched:
                return True
        return False

    # -- what a call's text alone says about its result -------------------------
    def in_package(self, expr, func) -> bool:
        """Whether ``expr`` in ``func`` names a file of the package itself (:mod:`~cslint.analysis.packagefiles`)."""
        return in_package(expr, lambda text: canonical_text(text, self.imports), func, self.tree)

    def read_configuration(self, call: ast.Call, func, self_name: Optional[str]) -> bool:
        """Whether ``call`` in ``func`` (``self_name``: a method's object) tests for a configuration file the
        function was handed whole and only reads (:mod:`~cslint.analysis.configfiles`)."""
        return read_configuration(call, lambda text: canonical_text(text, self.imports), func, self_name)

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
            if spec.what == "call" and text_matches(texts, spec.pattern):
                source = (spec.kind, spec.dims)
                break
        by_name = None
        if last.startswith("get_"):
            dims = rank_name_dims(last[4:])
            if dims is not None:
                by_name = (("*", dims),)
            elif size_name_is_uniform(last[4:]):
                by_name = "uniform"
        if by_name is None and last == "rank" and "." in raw and looks_like_communicator(raw.rsplit(".", 1)[0]):
            by_name = ALL_MODES_ALL_DIMS
        if by_name is None and any(self.knowledge.is_uniform(t) for t in texts):
            by_name = "uniform"
        found = (configured, source, by_name)
        self._text_verdicts[key] = found
        return found

    def attribute_text_verdict(self, text: str, norm: str, attr: str):
        """What the text of an attribute read ``text`` (``norm``: with the
        method's own first parameter as ``self``) says about its value,
        computed once per text: :data:`UNIFORM_TEXT`, ``(kind, dims)`` of
        the source it reads, or None when the text decides nothing."""
        key = (text, norm)
        found = self._attribute_verdicts.get(key, _UNKNOWN)
        if found is not _UNKNOWN:
            return found
        settings = self.settings
        knowledge = self.knowledge
        found = None
        if settings.uniform and matches_any(norm, settings.uniform):
            found = UNIFORM_TEXT
        elif settings.rank_local and matches_any(norm, settings.rank_local):
            found = ("rank-local (configured)", ALL_MODES_ALL_DIMS)
        else:
            dims = rank_name_dims(attr)
            if dims is not None and "()" not in text.rsplit(".", 1)[-1]:
                dims = knowledge.relative_rank_dims(text.rsplit(".", 1)[0], attr, self.group_word) or dims
                found = (KIND_RANK_ID, (("*", dims),))
            elif size_name_is_uniform(attr) and not (norm == "self." + attr and attr in self.size_reads.unheld_fields):
                found = UNIFORM_TEXT
            else:
                for spec in knowledge.candidates("sources", attr):
                    if spec.what == "value" and fnmatchcase(norm, spec.pattern):
                        found = (spec.kind, spec.dims)
                        break
                else:
                    if knowledge.is_uniform(norm):
                        found = UNIFORM_TEXT
        self._attribute_verdicts[key] = found
        return found

    @property
    def size_fields(self) -> frozenset:
        """The fields every ``self.attr = ...`` of this file sets to a
        group's size (``self.sync_size = scheduler.dp_tp_group.world_size``;
        ``None`` aside): a test of one against 1 reads whether that group
        has one rank (:func:`~cslint.analysis.grouptests.single_rank_side`).
        Worked out on first use."""
        found = self.__dict__.get("_size_fields")
        if found is None:
            found = self.__dict__["_size_fields"] = size_fields_of(self.tree, self.field_writes)
        return found

    @property
    def size_reads(self) -> SizeReads:
        """:attr:`size_fields`, less the reads of the size-named locals and
        fields of ``self`` that hold something other than a size
        (:class:`~cslint.analysis.sizereads.SizeReads`): what a test of
        a size is read with."""
        found = self.__dict__.get("_size_reads")
        if found is None:
            found = self.__dict__["_size_reads"] = SizeReads(
                self.size_fields, self.tree, self.knowledge.job_test_names,
                self.may_hold_walrus and self.walrus_binds_size)
        return found

    @property
    def positional_fields(self) -> dict:
        """attr -> length of the fields whose entries are tuples of one length
        (:func:`~cslint.analysis.entries.positional_fields`).  Worked out on
        first use, which only an entry store or an unpacked entry read asks,
        from the call scans of the file's functions where every function was
        scanned (:attr:`scanned`), else from a walk of the whole module."""
        found = self.__dict__.get("_positional_fields")
        if found is None:
            scanned = self.scanned
            found = self.__dict__["_positional_fields"] = positional_fields(
                walked(self.tree) if scanned is None else scanned_entry_nodes(*scanned))
        return found


def size_fields_of(tree: ast.Module, field_writes=None) -> frozenset:
    """:attr:`ModuleContext.size_fields` of a module's syntax tree (``field_writes``: its
    ``self.attr`` assignments as :class:`Communicators` keeps them, read instead of a walk)."""
    if field_writes is None:
        collector = Communicators()
        for node in iter_statements(tree):  # assignments are statements: no expression is visited
            if type(node) in (ast.Assign, ast.AnnAssign, ast.AugAssign):
                collector.note_fields(node)
        field_writes = collector.field_writes
    table: dict = {}
    for attr, value in field_writes:
        if type(value) is ast.Constant and value.value is None:
            continue
        # (not a bare ``.size``: a tensor's or an array's reads the same)
        sized = value is not None and is_size_expr(value) and dotted(
            value.func if type(value) is ast.Call else value).rpartition(".")[2] != "size"
        table[attr] = sized and table.get(attr, True)
    return frozenset(attr for attr, sized in table.items() if sized)
