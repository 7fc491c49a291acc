"""The package layout: no import circles, and the consumers share one
path helper, one diff writer and one finding identity."""

from __future__ import annotations

import ast
import collections
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = ("cslint", "codemods", "tensorrt_llm_patch")


def _modules() -> dict[str, str]:
    found = {}
    for package in PACKAGES:
        for directory, _dirs, files in os.walk(os.path.join(ROOT, package)):
            for name in files:
                if name.endswith(".py"):
                    path = os.path.join(directory, name)
                    module = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                    found[module[: -len(".__init__")] if module.endswith(".__init__") else module] = path
    return found


def _runtime_imports(tree: ast.Module):
    """Import statements that run (those under ``if TYPE_CHECKING:`` do not)."""
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    graph = {}
    for module, path in modules.items():
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
        package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
        targets = set()
        for node in _runtime_imports(tree):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
                continue
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            targets.add(base)
            targets.update(f"{base}.{alias.name}" for alias in node.names)
        graph[module] = {t for t in targets if t in modules and t != module}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict = {}
    low: dict = {}
    stack: list = []
    on_stack: set = set()
    found: list = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circles():
    assert circles(import_graph()) == []


def test_cslint_never_imports_the_codemods_or_the_patcher():
    graph = import_graph()
    offenders = {m: sorted(t for t in targets if t.split(".")[0] in ("codemods", "tensorrt_llm_patch"))
                 for m, targets in graph.items() if m.split(".")[0] == "cslint"}
    assert {m: t for m, t in offenders.items() if t} == {}


def test_consumers_share_the_path_helper_the_diff_writer_and_the_identity():
    graph = import_graph()
    for module in ("codemods.driver", "tensorrt_llm_patch.apply"):
        assert {"cslint.paths", "cslint.diffs"} <= graph[module], module
    assert "cslint.paths" in graph["cslint.baseline"] and "cslint.paths" in graph["tensorrt_llm_patch.report"]
    for module, path in _modules().items():
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
        called = {node.func.attr for node in ast.walk(tree)
                  if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)}
        assert "unified_diff" not in called or module == "cslint.diffs", f"{module} writes diffs itself"
        assert "relpath" not in called or module in ("cslint.paths", "cslint.report.common") \
            or module.startswith(("cslint.analysis", "cslint.engine", "cslint.config", "cslint.runtime")), \
            f"{module} relativises paths itself"


def test_one_knowledge_pack_for_analysis_codemods_and_runtime():
    """The group-to-allgather mapping lives in the preset; the codemods' agreement
    and the runtime's check channel both read it."""
    from cslint.presets import agreement_groups
    from cslint.presets.tensorrt_llm import GROUP_ALLGATHER
    from cslint.runtime.wrappers import DistributedProxy

    assert DistributedProxy._ALLGATHER == tuple(method for _group, method in GROUP_ALLGATHER)
    assert agreement_groups("trtllm") == tuple(group for group, _method in GROUP_ALLGATHER)
    graph = import_graph()
    assert "cslint.presets.tensorrt_llm" in graph["cslint.runtime.wrappers"]
    for module in ("codemods.consensus_rewrite", "codemods.always_enter_rewrite", "codemods.sites"):
        assert "cslint.presets" in graph[module], module


# -- rooms and their sizes ------------------------------------------------------------

MAX_MODULE_LINES = 800
MAX_CLASS_LINES = 400

#: Files over the limits that belong to work outside the restructuring (path
#: -> why); empty: every module and class is within them.
KNOWN_LARGE: dict = {}


def test_modules_and_classes_stay_small():
    """A room that grows past a few hundred lines is several rooms: no module
    over 800 lines, no class over 400, in cslint, codemods and the patcher."""
    too_large = []
    for module, path in _modules().items():
        with open(path, encoding="utf-8") as handle:
            source = handle.read()
        lines = source.count("\n") + (not source.endswith("\n") and bool(source))
        if lines > MAX_MODULE_LINES:
            too_large.append(f"{module}: {lines} lines")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ClassDef) and node.end_lineno - node.lineno + 1 > MAX_CLASS_LINES:
                too_large.append(f"{module}.{node.name}: {node.end_lineno - node.lineno + 1} lines")
    assert [entry for entry in too_large if entry.split(":")[0] not in KNOWN_LARGE] == []


#: What each room of cslint may import besides itself (prefixes of module
#: names).  The analysis computes facts and knows nothing of rules, reports,
#: the engine or the command line; rules phrase hazards without analysing;
#: the engine runs the analysis and the rules; reports read findings.
ROOMS = {
    "cslint.model": set(),
    "cslint.presets": {"cslint.model"},
    "cslint.analysis": {"cslint.config", "cslint.model", "cslint.presets"},
    "cslint.rules": {"cslint.model", "cslint.presets"},
    "cslint.engine": {"cslint", "cslint.analysis", "cslint.config", "cslint.model", "cslint.presets",
                      "cslint.rules", "cslint.suppressions", "cslint.progress", "cslint.decoding"},
    "cslint.report": {"cslint", "cslint.baseline", "cslint.config", "cslint.model", "cslint.rules"},
}


def _room_of(module: str):
    for room in sorted(ROOMS, key=len, reverse=True):
        if module == room or module.startswith(room + "."):
            return room
    return None


def test_each_room_imports_only_what_it_may():
    graph = import_graph()
    breaches = []
    for module, targets in sorted(graph.items()):
        room = _room_of(module)
        if room is None:
            continue
        for target in sorted(targets):
            if _room_of(target) == room:
                continue
            if not any(target == allowed or target.startswith(allowed + ".") and allowed != "cslint"
                       for allowed in ROOMS[room]):
                breaches.append(f"{module} -> {target}")
    assert breaches == []


#: The phases of the analysis, in order: a module imports only modules of
#: earlier phases (per-file facts first, the whole-tree pass after them).
ANALYSIS_PHASES = [
    ("astwalk", "atoms", "environment", "modulenames", "groupgetters"),  # tree walking, typed atoms and their
    # transforms, environments; the dotted name a file has from its packages; what a tree's group getters return
    ("divergence", "results", "callrefs"),  # divergence maps, over the atoms' sources; call results and their
    # nesting; references to functions, what a call calls
    ("exits",),  # what ends a block, a handler, the process or the job
    ("cfg", "vocabulary"),  # control flow; names known without presets
    ("controldependence",),  # what decides whether a node of the control flow runs
    ("syntax", "bindings", "ownstructure", "shapes", "records", "callfacts", "jobkills", "spans", "positions",
     "spreadlengths", "exitarms"),
    # what the syntax says; what it binds; what it says of a value's own structure; the per-file records; the methods
    # a job-killing wrapper runs; what a slice's bounds leave of its width; a display's elements kept apart at a
    # parameter; how many elements a spread sequence holds, through the binding reaching it; the arm of a loop's test
    # that leaves it on every path out of it
    ("grouptests",),  # tests the syntax alone reads as asking whether a group has one rank, or holds this rank
    ("escapes", "retries"),  # failing work, and the calls that fail where their callee's own tests say; failures an
    # event loop retries before its iteration communicates
    ("namereach", "sizereads"),  # which binding of a name reaches a read of it, as far as whether it is None
    # goes; which reads of a size-named name hold a group's size
    ("presence", "localdicts", "tuplelists", "complements", "funcaliases", "spreads", "packagefiles", "configfiles",
     "mappings"),  # tests
    # that only ask whether a value is there; a local dict display's values kept apart per key; a local list's tuples
    # kept apart per position; one rank first, then the others, binding a name to one call; module-level names that
    # only ever hold a function; arguments a call spreads; paths of the package's own files; configuration files a
    # function is handed and only reads; names that hold a mapping wherever they are read
    ("membership", "roots", "relays", "communicators", "fallbacks", "selfcalls", "presentreturns", "presentfields",
     "rebuilds"),  # a rank list
    # picked by membership in it; where a rank is a broadcast's root; a value relayed stage to stage; the groups a
    # module makes and their own rank lists; locals holding a group parameter with a fallback; what a method's calls
    # on self write; a result that tells a function's ways apart only by its None-ness; what a field holds where it is
    # not None; a field rebuilt from its own settings
    ("arms", "armlocals", "stores", "lists", "entries", "setfields", "correlated", "exitcalls", "neighbours",
     "lackednames"),  # calls
    # and assignments both arms of an if/else make alike; the tests a local the summary walk binds leaves out; tests
    # storing alike; index stores into a list; tables whose entries are tuples of one length; fields a method sets;
    # tests of one chain that decide each other; a call every way out of a decision makes once; an exchange with a
    # neighbouring stage under the test that it is there; an attribute the object a field is rebuilt with lacks
    ("collectivegroups", "namedgroups", "agreedbuffers"),  # which call is a collective and over which group; the
    # group an object's own process group is where a test of its name says so; a helper's buffer agreed where only a
    # group of one rank skips its collective, or relayed down the stages in place
    ("scope",),  # one module's imports, communicators, call texts
    ("asyncwork",),  # collectives asked to run asynchronously, whose buffers agree where their handle is waited on
    ("agreedparams",),  # the parameters a helper of the module hands to what agrees them in place
    ("receivers", "copies", "tensorarms", "pairpayload", "rootkept"),  # what a method call's receiver is, by type terms; a name
    # or field rebound to a copy of what it holds; a name both arms of an if/else bind to a tensor; the structure of
    # what a pair of stages exchanges; the payload a helper's broadcast hands back on its root
    ("unfailing",),  # calls that cannot raise where they stand (a builtin container's method)
    ("localgroups",),  # the group a call's communicator argument holds, through what the function binds
    ("wrappers", "logs"),  # modules wrapped for data parallelism; calls that emit a log record
    ("orders", "registries", "threads", "raises", "recorded", "classargs"),  # loops over a set, in each process's
    # order; over a registry filled lazily; code a background thread runs; exceptions of the tree's own classes;
    # failures recorded in a name; classes handed in
    ("converging",),  # a statement whose failure ends its function as its success does
    ("classreads", "managed", "attached"),  # the classes a function reads as a value; a classmethod's calls of its
    # own class; the __enter__/__exit__ calls a with statement makes; the functions it attaches to objects it holds
    ("functionscan",),  # the one cheap walk of a function body
    ("memosyntax",),  # a function's memo fills, the module globals it rebinds, its leading calls
    ("function",),  # one function's facts and references
    ("typedcalls",),  # calls of another file's typed wrapper, by the receiver's class
    ("feasibility",),  # which paths run under the configuration every rank shares
    ("iteration",),  # what each name of a loop's target takes from its iterable (enumerate, zip)
    ("unanimity",),  # a test that every rank gathered this rank's own value
    ("containers", "noneness"),  # which names of a function hold a container; whether a value is None
    ("structure",),  # reads of a value's structure
    ("callplans",),  # what a call's text alone decides about its result
    ("exceptionreads",),  # what an exception a statement raises or a handler catches depends on
    ("typetests",),  # the reads of a name inside the arm of a type test for a class no data is of
    ("evaluator",),  # expressions
    ("flows",),  # the variables a walker carries through statements
    ("fieldwrites", "resulttransfer"),  # what a statement writes into the fields of self; what a return or a
    # yield hands back
    ("transfer",),  # statements
    ("armexits", "exclusive", "mirrors", "twostage", "padding"),  # the ways out of an if's arm, where the names it bound take
    # its test back; a later arm whose test rules out an earlier one, where those names hold what they held before
    # it; the root's own copy of what it broadcast; a broadcast over one group by another's leaders, then over that one
    # (and a length padded up to the group's agreed maximum, past the padding if)
    ("edges", "settled", "skipped"),  # what the dataflow refines along an edge; exits a collective settles; bindings
    # a failure in a try body leaves undone
    ("bindingflow",),  # implicit flow into the names a node binds, less the tests their readers took alike
    ("summarycalls",),  # the call sites and failures a summarised statement hands on
    ("summary", "dataflow"),  # the two walkers
    ("closedover",),  # what a nested function reads of its enclosing function's locals
    ("roles",),  # decisions of equality tests that split the ranks into roles; chains that hand a group out by role
    ("alternatives",),  # site sequences of both arms
    ("exceptionguards",),  # the conditions a failure puts on a call site
    ("guards",),  # guard classification
    ("deep",),  # a deep function's sites
    ("recordinits", "sidebindings", "fieldparams"),  # the __init__ a dataclass or a record class is given; methods
    # bound on one side of a group-size test; the fields a constructor sets from its parameters
    ("rootside",),  # the fields a method fills only on one rank, the methods called only where a field is there
    ("facts",),  # the per-file orchestrator
    ("receiverclasses",),  # which classes a receiver may be an instance of
    ("resolution", "processes"),  # names across the tree; which processes a method runs in, by how its class
    # binds it
    ("constructions", "constructiongroups"),  # fields of an object the reader sees built; the group every
    # construction of a class hands a field
    ("fieldreads",),  # fields of an object over the whole-tree tables
    ("reads",),  # call results and attributes over the whole-tree tables
    ("tablevalues",),  # the value of an atom set over the whole-tree tables
    ("callercontext",),  # a summarised function's calling conditions, handed to every function it calls
    ("demand",),  # which functions the fixpoint steps
    ("stepreads",),  # what a step of the fixpoint reads
    ("memofills",),  # module memos a class's constructors fill
    ("program",),  # the fixpoint
    ("carriers", "issuingroutes"),  # broadcasts a fix can carry a condition in; the communicators an arm's
    # collectives are asked of
    ("uniformity", "contexts", "announced", "callerreports"),  # the query object; a case parameter's site judged
    # in its calling contexts; a decision one rank takes alone whose every way opens with the same announcement; a
    # hazard whose condition differs through parameters alone, asked of the calls of the tree
    ("hazards",),  # the decisions made from its answers
]


def test_the_analysis_phases_depend_one_way():
    phase_of = {f"cslint.analysis.{name}": index for index, names in enumerate(ANALYSIS_PHASES) for name in names}
    graph = import_graph()
    analysis = {m for m in graph if m.startswith("cslint.analysis.")}
    assert analysis == set(phase_of), "every analysis module has a phase"
    backwards = [f"{module} -> {target}" for module in sorted(analysis) for target in sorted(graph[module])
                 if target in phase_of and phase_of[target] >= phase_of[module]]
    assert backwards == []


def _phase_table_modules() -> list:
    """The modules the module column of docs/internals.md's table "The
    analysis, phase by phase" names, in the order it names them."""
    with open(os.path.join(ROOT, "docs", "internals.md"), encoding="utf-8") as handle:
        text = handle.read()
    section = text.split("## The analysis, phase by phase", 1)[1].split("\n## ", 1)[0]
    named = []
    for line in section.splitlines():
        cells = line.split("|")
        if line.startswith("|") and len(cells) > 3:
            named.extend(re.findall(r"`(\w+)\.py`", cells[2]))
    return named


def test_the_phase_table_names_every_analysis_module_once():
    """docs/internals.md's phase table is where a reader looks a module of
    the analysis up: each has its row (or shares one), and only once."""
    named = _phase_table_modules()
    modules = {m.rpartition(".")[2] for m in _modules() if m.startswith("cslint.analysis.")}
    assert sorted(modules - set(named)) == [], "modules of cslint/analysis/ the phase table does not name"
    assert sorted(set(named) - modules) == [], "names in the phase table that are no module of cslint/analysis/"
    assert sorted(m for m, n in collections.Counter(named).items() if n > 1) == [], "named twice"


#: The node kinds astwalk names once (``DEFINITIONS``, ``LOOPS``).
_NAMED_ONCE = {
    frozenset({"FunctionDef", "AsyncFunctionDef", "ClassDef", "Lambda"}): "astwalk.DEFINITIONS",
    frozenset({"For", "AsyncFor", "While"}): "astwalk.LOOPS",
}


def _node_kinds(display) -> frozenset:
    """``{"For", ...}`` of a tuple or set display of ``ast.X`` names only; empty for anything else."""
    if not isinstance(display, (ast.Tuple, ast.Set)) or not display.elts:
        return frozenset()
    if not all(isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "ast"
               for e in display.elts):
        return frozenset()
    return frozenset(e.attr for e in display.elts)


def test_the_analysis_asks_astwalk_for_definitions_and_loops():
    """A module of the analysis tests for a definition or a loop with
    ``astwalk.DEFINITIONS``/``astwalk.LOOPS`` (``type(node) in ...``), not a
    copy of its own that may drift; the modules of astwalk's own phase
    cannot import it."""
    first_phase = {f"cslint.analysis.{name}" for name in ANALYSIS_PHASES[0]}
    copies = []
    for module, path in sorted(_modules().items()):
        if not module.startswith("cslint.analysis.") or module in first_phase:
            continue
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
        for node in ast.walk(tree):
            named = _NAMED_ONCE.get(_node_kinds(node))
            if named:
                copies.append(f"{module}:{node.lineno} copies {named}")
    assert copies == []


def test_the_rank_id_kind_is_written_by_its_constant():
    """A source of a rank's own id has one kind, ``presets.KIND_RANK_ID``
    (of its device, ``presets.KIND_DEVICE_ID``): the presets that declare
    such sources and the analysis and rules that make or test them name the
    constant, never a copy of its text that may drift from it."""
    from cslint.presets import KIND_DEVICE_ID, KIND_RANK_ID

    copies = []
    for module, path in sorted(_modules().items()):
        if module == "cslint.presets.specs":
            continue
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
        copies.extend(f"{module}:{node.lineno}" for node in ast.walk(tree)
                      if isinstance(node, ast.Constant) and node.value in (KIND_RANK_ID, KIND_DEVICE_ID))
    assert copies == []


def _top_level_imported_names(tree: ast.Module):
    """``(name, node)`` for each name a module's top-level imports bind
    (those under ``if TYPE_CHECKING:`` included: an annotation reads them)."""
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If):
            stack.extend(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            stack.extend(node.body + node.orelse + node.finalbody + [s for h in node.handlers for s in h.body])
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name != "*" and not (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
                    yield (alias.asname or alias.name).partition(".")[0], node


def _names_in_string_annotations(tree: ast.Module) -> set:
    """The identifiers a string annotation spells (``node: "nodes.Module"``)."""
    annotations = [node.annotation for node in ast.walk(tree) if isinstance(node, (ast.arg, ast.AnnAssign))
                   and node.annotation is not None]
    annotations += [node.returns for node in ast.walk(tree)
                    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None]
    return {name for annotation in annotations for node in ast.walk(annotation)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            for name in re.findall(r"[A-Za-z_]\w*", node.value)}


def test_no_module_imports_a_name_it_never_reads():
    """An import nothing reads misleads the reader about what a module
    depends on; a name another module imports from it (a re-export) counts
    as read there.  ``__init__.py`` files re-export by design."""
    trees = {}
    for module, path in _modules().items():
        with open(path, encoding="utf-8") as handle:
            trees[module] = (path, ast.parse(handle.read()))
    imported_from: set = set()  # (module, name) another module imports by name
    for module, (path, tree) in trees.items():
        package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([node.module] if node.module else []))
                imported_from.update((base, alias.name) for alias in node.names)
    unread = []
    for module, (path, tree) in sorted(trees.items()):
        if path.endswith("__init__.py"):
            continue
        read = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
        read.update(_names_in_string_annotations(tree))
        read.update(element.value for node in tree.body if isinstance(node, ast.Assign)  # ``__all__``: exported
                    and any(isinstance(target, ast.Name) and target.id == "__all__" for target in node.targets)
                    for element in getattr(node.value, "elts", ()) if isinstance(element, ast.Constant))
        for name, _node in _top_level_imported_names(tree):
            if name not in read and (module, name) not in imported_from:
                unread.append(f"{module}: {name}")
    assert unread == []


def _spells_an_import_binding(node) -> bool:
    """``(alias.asname or alias.name).split(".")[0]`` or ``alias.asname or
    alias.name.partition(".")[0]``: the name an import alias binds."""
    if not (isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and len(node.values) == 2
            and isinstance(node.values[0], ast.Attribute) and node.values[0].attr == "asname"):
        return False
    return any(isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute)
               and inner.func.attr in ("split", "partition") for inner in ast.walk(node.values[1]))


def test_the_analysis_asks_astwalk_what_an_import_binds():
    """What an import binds is ``astwalk.imported_names``: a module that
    spells it again may drift, and a test for an ``ast.alias`` node never
    holds on the fast walk, which takes an import as a leaf (two such tests
    once missed every import between two ``if`` statements)."""
    copies = []
    for module, path in sorted(_modules().items()):
        if not module.startswith("cslint.analysis.") or module == "cslint.analysis.astwalk":
            continue
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
        split_receivers = {id(node.func.value) for node in ast.walk(tree) if isinstance(node, ast.Call)
                           and isinstance(node.func, ast.Attribute) and node.func.attr in ("split", "partition")}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "alias" and isinstance(node.value, ast.Name) \
                    and node.value.id == "ast":
                copies.append(f"{module}:{node.lineno} tests for ast.alias")
            elif isinstance(node, ast.BoolOp) and (_spells_an_import_binding(node) or id(node) in split_receivers
                                                   and isinstance(node.values[0], ast.Attribute)
                                                   and node.values[0].attr == "asname"):
                copies.append(f"{module}:{node.lineno} spells what an import binds")
    assert copies == []


def _named_elsewhere() -> collections.Counter:
    """How often each identifier is named (a name, an attribute, a word of a
    string) in cslint, codemods, the patcher, bench/ and tests/."""
    counts: collections.Counter = collections.Counter()
    for top in (*PACKAGES, "bench", "tests"):
        for directory, _dirs, files in os.walk(os.path.join(ROOT, top)):
            for name in files:
                if name.endswith(".py"):
                    with open(os.path.join(directory, name), encoding="utf-8") as handle:
                        counts.update(re.findall(r"[A-Za-z_]\w*", handle.read()))
    return counts


def test_every_function_of_the_analysis_is_called_or_named():
    """A function or a constant nothing names is dead code a reader still
    has to read: every top-level function, method and module-level name of
    cslint.analysis is named somewhere besides its own definition (dunders
    aside: Python calls them)."""
    counts = _named_elsewhere()
    unnamed = []
    for module, path in sorted(_modules().items()):
        if not module.startswith("cslint.analysis."):
            continue
        with open(path, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
        definitions = [node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
        for cls in (node for node in tree.body if isinstance(node, ast.ClassDef)):
            definitions += [node for node in cls.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
        for node in definitions:
            if not node.name.startswith("__") and counts[node.name] <= 1:
                unnamed.append(f"{module}:{node.lineno} {node.name}")
        for node in tree.body:
            for target in node.targets if isinstance(node, ast.Assign) else ():
                if isinstance(target, ast.Name) and not target.id.startswith("__") and counts[target.id] <= 1:
                    unnamed.append(f"{module}:{node.lineno} {target.id}")
    assert unnamed == []
