"""Per-file facts computed from the AST alone: the orchestrator.

Everything a file contributes is plain picklable data
(:mod:`cslint.analysis.records`), so files are analysed in worker processes
and cached by content digest.  Values are described *symbolically*: the
divergence of an expression is a frozenset of typed atoms
(:mod:`cslint.analysis.atoms`), resolved by :mod:`cslint.analysis.program`
once the whole tree is known.

The phases, each in its own module and depending only on the ones before:

1. :mod:`~cslint.analysis.scope`: the module's imports, communicators and
   what a call's text says (collective, source, rank getter);
2. :mod:`~cslint.analysis.function`: one walk per function body (callees,
   locals, loops, raises), and references to callees;
3. :mod:`~cslint.analysis.evaluator`: the atoms of an expression;
4. :mod:`~cslint.analysis.summary`: the summary walk of a function that
   cannot reach a collective; :mod:`~cslint.analysis.dataflow`: the CFG
   dataflow of one that can;
5. :mod:`~cslint.analysis.guards` (with :mod:`~cslint.analysis.alternatives`):
   the conditions of each call site, by guard kind;
6. :mod:`~cslint.analysis.deep`: a deep function's sites, fields and returns;
7. here: which functions are deep, and the file's facts.
"""

from __future__ import annotations

import ast
import os
from typing import Optional

from ..config import Settings
from ..presets import Knowledge
from .astwalk import DEFINITIONS, walked
from .attached import attached_functions
from .callrefs import class_ref, is_classmethod, qual_ref
from .classargs import class_arguments
from .deep import deep_variant
from .typedcalls import calls_module_wrapper, calls_typed_wrapper, module_entries, typed_entries
from .evaluator import Evaluator
from .fallbacks import default_groups, none_defaulted
from .feasibility import Feasibility, handed_flags
from .fieldparams import field_parameters
from .function import FunctionInfo, free_names, mode_names_used, rank_param_sources
from .lackednames import class_body_names, file_foreign_stores, fill_bound_names
from .orders import may_make_sets
from .receivers import annotation_terms, class_attribute_terms, returned_terms
from .records import ClassFacts, FileFacts, FuncFacts, PendingFuncFacts, Variant
from .recordinits import dataclass_init
from .relays import relay_receives
from .scope import ModuleContext, canonical_text, module_name_for
from .setfields import fields_set_first
from .memosyntax import first_call_ref, global_stores, leading_calls
from .sidebindings import asserted_single_groups, handed_methods, side_bindings
from .sizereads import walrus_may_bind_size
from .rootside import derived_stores, present_calls, rooted_writes
from .spans import may_cut_pieces, returns_pieces
from .summary import SummaryWalk
from .syntax import CONSTRUCTORS, called_as, dotted
from .localgroups import binding_nodes
from .closedover import closed_over_entry
from .wrappers import own_nodes


#: decorators that make a method an attribute read (``self.name`` runs it)
PROPERTY_DECORATORS = frozenset({"property", "cached_property"})



def extract_function(info: FunctionInfo, deep: bool, called_names: frozenset = frozenset()) -> tuple:
    """(:class:`FuncFacts`, the variables at its exit) of one function: the
    summary walk, or the dataflow once per mode assignment its tests name."""
    evaluator = Evaluator(info)
    if not deep:
        walk = SummaryWalk(evaluator)
        variants = {None: walk.variant()}
        exit_env = walk.exit_env
    else:
        variants = {}
        exit_env = {}
        feasible = Feasibility(info)
        case_params = feasible.case_params
        cases = [tuple(case.values()) for case in feasible.cases()] if case_params else []
        if mode_names_used(info):
            for modes in info.ctx.knowledge.mode_assignments():
                variants[modes], exit_env = deep_variant(evaluator, feasible.fold(modes),
                                                         feasible.live_calls(modes), cases, case_params)
        elif feasible.needed():
            variants[None], exit_env = deep_variant(evaluator, feasible.fold(None), feasible.live_calls(None), cases,
                                                  case_params)
        else:
            variants[None], exit_env = deep_variant(evaluator, None, case_params=case_params)
    return _func_facts(info, deep, called_names, variants, case_params if deep else walk.case_params), exit_env


def _scanned_with_own_helpers(wanted: frozenset, extractors: list) -> dict:
    """``id(info)`` -> the names it calls, of the functions ``wanted``
    and of the module-level functions of the same file they call, and
    theirs in turn (``def my_rank(): return _impl()``): what a summarised
    callee returns of its own helper's reads is read from that helper's
    summary (each function scanned once)."""
    top: dict = {}
    for info in extractors:
        if "." not in info.qualname:
            top.setdefault(info.qualname, []).append(info)
    todo = [info for info in extractors if info.qualname in wanted]
    called: dict = {}  # id(info) -> the names it calls (a name defined twice: each definition)
    while todo:
        info = todo.pop()
        if id(info) in called:
            continue
        names = called[id(info)] = info.scan_calls().names
        todo.extend(helper for name in sorted(names) for helper in top.get(name, ()) if id(helper) not in called)
    return called


def summarised(info: FunctionInfo, called_names: frozenset) -> FuncFacts:
    """The facts of a summarised function as :func:`extract_function`
    gives them, worked out later for a
    :class:`~cslint.analysis.records.PendingFuncFacts`."""
    return extract_function(info, False, called_names)[0]


def summarised_or_empty(info: FunctionInfo, called_names: frozenset, position: int) -> FuncFacts:
    """:func:`summarised`, or an empty summary where the walk nests past the
    interpreter's recursion limit.  A function that may be left pending
    (reaches no collective, writes no field) gets this whether it is
    summarised at once or when the pass reads it, so that a file's
    findings do not depend on whether its facts come from the fact cache
    (eager) or not (lazy): a function the pass never reads would otherwise
    make the file CSL001 in one mode and not in the other."""
    try:
        return summarised(info, called_names)
    except RecursionError:
        return pending_function(info, called_names, position).settled({None: Variant()})


def pending_function(info: FunctionInfo, called_names: frozenset, position: int) -> PendingFuncFacts:
    """The facts of a summarised function but its variants (see
    :class:`~cslint.analysis.records.PendingFuncFacts`), worked out on a
    copy of what the function keeps of the calls it resolved: a receiver
    typed while a binding of the same name is typed reads the name as
    unknown, and that answer is kept, so the summary walk must start from
    what it starts from at once (:func:`summarised` takes the parts again
    after it)."""
    refs, receivers = info._refs, info._receivers
    info._refs = dict(refs)
    info._receivers = receivers.copy() if receivers is not None else None
    try:
        facts = _func_facts(info, False, called_names, {}, handed_flags(info))
    finally:
        info._refs, info._receivers = refs, receivers
    facts.__class__ = PendingFuncFacts
    facts.__dict__["position"] = position
    if getattr(info.func, "returns", None) is not None or not info.returned_values:
        facts.__dict__["returns_known"] = True  # not typed by the walk (_returns_terms)
    return facts


def _syntax_parts(info: FunctionInfo) -> tuple:
    """(side bindings, fields set first, field parameters, asserted single
    groups) of a function: what :func:`_func_facts` reads off its syntax
    (and the module's, and its call scan) and the module's fixed facts (its
    size fields, how its framework names groups), none of it of a reference
    resolved or a receiver typed.  Kept on the function: a summary left
    pending has its facts worked out twice, at once and after its walk when
    something reads it (:func:`pending_function`, :func:`summarised`), and
    these parts are the same both times."""
    found = info.__dict__.get("_syntax_parts")
    if found is None:
        found = info.__dict__["_syntax_parts"] = (side_bindings(info), fields_set_first(info), field_parameters(info),
                                                  asserted_single_groups(info))
    return found


def _func_facts(info: FunctionInfo, deep: bool, called_names: frozenset, variants: dict,
                case_params: tuple) -> FuncFacts:
    (single, several, calls), set_first, field_params, asserted = _syntax_parts(info)
    return FuncFacts(info.key, info.qualname, info.ctx.module, info.ctx.path, info.line, info.class_key,
                     info.params, info.self_offset, variants, deep,
                     # a function that reaches a collective also raises what the calls it makes raise
                     info.raises or (deep and any(v.raised for v in variants.values())), called_names,
                     tuple(info.signal_handlers), _returns_terms(info),
                     case_params, tuple(atom for _index, atom in rank_param_sources(info)),
                     info.local_io, single, several,
                     _restored_fields(info), tuple(sorted(info.own_params)),
                     field_params, () if deep else _passing_refs(info),
                     class_arguments(info), info.self_calls, info.hands_self, set_first,
                     () if deep else _bare_refs(info),
                     handed_methods(info) if single or several else frozenset(), info.arity,
                     default_groups(info, lambda: binding_nodes(info)) if deep else (),
                     none_defaulted(info.func) - info.rebound_params if deep else frozenset(),
                     info.handed_classes, info.built_own_class, calls, attached_functions(info),
                     free_names(info), returns_pieces(info),
                     global_stores(info),
                     leading_calls(info) if deep and info.class_key else frozenset(),
                     # (a summarised constructor counts only by running another: super().__init__(...))
                     first_call_ref(info) if not deep and info.qualname.endswith(".__init__")
                     and "__init__" in info.callee_names else (),
                     asserted, rooted_writes(info), present_calls(info), derived_stores(info),
                     bound_by_class=info.class_key is not None and is_classmethod(info.func))


def writes_no_field(info: FunctionInfo) -> bool:
    """Whether no statement of the function can write a field of its class
    (``Transfer.field_writes`` records a field write or a field type only
    at ``self.x = ...``, ``self.x[k] = ...``, targets nested in tuples, and
    a method call on ``self.x``): no assignment target, deletion or call
    of its own reads an attribute of ``self``.  Such a summary may be left
    pending: the whole-tree indexes of fields need nothing of it."""
    if not info.self_name or not info.class_key:
        return True
    if info.may_write_field is not None:
        return not info.may_write_field  # what the call scan saw
    own = info.self_name
    for node in own_nodes(info.func):
        kind = type(node)
        if kind is ast.Attribute:
            if type(node.ctx) is not ast.Load and type(node.value) is ast.Name and node.value.id == own:
                return False
        elif kind is ast.Subscript:
            if type(node.ctx) is not ast.Load and type(node.value) is ast.Attribute:
                return False
        elif kind is ast.Call:
            func = node.func
            if type(func) is ast.Attribute and type(func.value) is ast.Attribute \
                    and type(func.value.value) is ast.Name and func.value.value.id == own:
                return False
    return True


def _passing_refs(info: FunctionInfo) -> tuple:
    """The references of the calls with arguments a summarised function
    makes itself (lambdas included), each once, in source order: a call
    passes its callee's parameters values whatever they carry, and the
    whole-tree indexes of calls read this instead of the summary's sites,
    which keep a call only where its arguments carry something
    (``SummaryWalk._calls``)."""
    calls = [node for nodes in info.calls_by_statement.values() for node in nodes]
    for lambdas in info.lambdas_by_statement.values():
        for lam in lambdas:
            calls.extend(node for node in walked(lam.body) if type(node) is ast.Call and (node.args or node.keywords))
    calls.sort(key=lambda node: (node.lineno, node.col_offset))
    refs = (info.resolve_ref(node.func) for node in calls)
    return tuple(dict.fromkeys(ref for ref in refs if ref is not None))


def _bare_refs(info: FunctionInfo) -> tuple:
    """The references of the calls without arguments a summarised function
    makes itself (lambdas included), each once: what they run, they run
    only where the function runs (``callercontext.py``)."""
    calls = info.bare_calls
    if info.lambdas_by_statement:
        calls = list(calls)
        for lambdas in info.lambdas_by_statement.values():
            for lam in lambdas:
                calls.extend(node for node in walked(lam.body)
                             if type(node) is ast.Call and not node.args and not node.keywords)
    refs: dict = {}  # (in the order of the walk that found them: the same on every run)
    for node in calls:
        ref = info.resolve_ref(node.func)
        if ref is not None:
            refs[ref] = None
    return tuple(refs)


def _restored_fields(info: FunctionInfo) -> frozenset:
    """The fields a ``@contextmanager`` method saves, sets and puts back
    around its ``yield`` (``old = self.disabled; self.disabled = not enable;
    try: yield finally: self.disabled = old``): what it sets there holds only
    inside the caller's ``with``, so a caller past the block reads the value
    the field had before, whichever ranks entered it."""
    if not info.is_context_manager or not info.self_name:
        return frozenset()
    saved: dict = {}
    restored: set = set()
    for stmt in info.func.body:
        if type(stmt) is ast.Assign and len(stmt.targets) == 1 and type(stmt.targets[0]) is ast.Name:
            attr = info.self_attr(stmt.value)
            if attr is not None:
                saved[stmt.targets[0].id] = attr
        elif type(stmt) is ast.Try and stmt.finalbody and any(
                type(s) is ast.Expr and type(s.value) is ast.Yield for s in stmt.body):
            for last in stmt.finalbody:
                if type(last) is ast.Assign and len(last.targets) == 1 and type(last.value) is ast.Name:
                    attr = info.self_attr(last.targets[0])
                    if attr is not None and saved.get(last.value.id) == attr:
                        restored.add(attr)
    return frozenset(restored)


def _returns_terms(info: FunctionInfo) -> tuple:
    """Type terms of what a function returns: its annotation, else its
    ``return`` values (receivers.py)."""
    annotation = getattr(info.func, "returns", None)
    if annotation is not None:
        return annotation_terms(annotation, info.ctx)
    return returned_terms(info) if info.returned_values else ()


def _final_globals(exit_env: dict) -> dict:
    """Module bodies: the non-uniform module-level variables at the end."""
    return {name: atoms for name, atoms in exit_env.items() if atoms and type(name) is str}


def _walk_defs(ctx: ModuleContext, body, prefix: str, class_key, out_funcs, out_classes, in_function,
               defs: Optional[list] = None, enclosing: Optional[FunctionInfo] = None, suffix: str = ""):
    """Collect a :class:`FunctionInfo` for every function in a body (nested
    ones included) and the facts of every class.  ``defs``: the body's
    :func:`_nested_defs`, when the caller has them already; ``enclosing``:
    the function whose body it is (its parameters are a nested function's
    free variables, :func:`~cslint.analysis.function.enclosing_params`)."""
    local_defs = {}
    for stmt in body:
        t = type(stmt)  # (the parser makes no subclasses of node types)
        if t is ast.FunctionDef or t is ast.AsyncFunctionDef:
            qual = f"{prefix}{stmt.name}"
            local_defs[stmt.name] = qual
    alternatives = alternative_definitions(body) if not prefix else {}
    for stmt in _nested_defs(body) if defs is None else defs:
        t = type(stmt)
        if t is ast.FunctionDef or t is ast.AsyncFunctionDef:
            qual = f"{prefix}{stmt.name}"
            is_method = class_key is not None and not in_function
            inner_defs = _nested_defs(stmt.body)
            nested = {}
            for inner in inner_defs:
                if type(inner) is ast.FunctionDef or type(inner) is ast.AsyncFunctionDef:
                    nested[inner.name] = f"{qual}.<locals>.{inner.name}"
            visible = dict(local_defs if in_function else {})
            visible.update(nested)
            made = FunctionInfo(ctx, stmt, qual, class_key if is_method else None, is_method, visible)
            made.enclosing = enclosing if in_function else None
            own_suffix = alternatives.get(id(stmt), suffix)
            made.key_suffix = own_suffix
            if in_function:
                made.closure_entry = closed_over_entry
            out_funcs.append(made)
            _walk_defs(ctx, stmt.body, f"{qual}.<locals>.", class_key if is_method else None,
                       out_funcs, out_classes, True, inner_defs, made, own_suffix)
        elif t is ast.ClassDef:
            qual = f"{prefix}{stmt.name}"
            key = f"{ctx.module}:{qual}"
            bases = []
            base_texts = []
            ctx.class_body_names[key] = class_body_names(stmt.body) if all(map(dotted, stmt.bases)) else None
            for base in stmt.bases:
                text = dotted(base)
                if not text:
                    continue
                if text in ctx.module_classes:
                    bases.append(class_ref(f"{ctx.module}:{text}"))
                    base_texts.append(text)
                else:
                    base_texts.append(canonical_text(text, ctx.imports))
                    bases.append(qual_ref(base_texts[-1]))
            ctx.class_bases[key] = tuple(base_texts)
            methods = {}
            field_terms = []
            properties = []
            body = stmt.body
            made_init = dataclass_init(ctx, stmt)
            if made_init is not None:
                body = body + [made_init]
            for inner in body:
                kind = type(inner)
                if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                    methods[inner.name] = f"{ctx.module}:{qual}.{inner.name}"
                    if any((dotted(d) or "").rsplit(".", 1)[-1] in PROPERTY_DECORATORS for d in inner.decorator_list):
                        properties.append(inner.name)
                elif kind is ast.AnnAssign and type(inner.target) is ast.Name:
                    terms = annotation_terms(inner.annotation, ctx)
                    if terms:
                        field_terms.append((inner.target.id, terms))
                elif kind is ast.Assign and len(inner.targets) == 1 and type(inner.targets[0]) is ast.Name:
                    terms = class_attribute_terms(inner.value, ctx)
                    if terms:
                        field_terms.append((inner.targets[0].id, terms))
            out_classes.append(ClassFacts(key, stmt.name, ctx.module, tuple(bases), methods, tuple(field_terms),
                                          tuple(properties)))
            _walk_defs(ctx, body, f"{qual}.", key, out_funcs, out_classes, False)


def alternative_definitions(body: list) -> dict:
    """``id(def)`` -> the end of its key (``@line``, ``FunctionInfo.key_suffix``), for the module-level
    definitions of a name some block defines (``if HAVE_X: def probe(): ... else: def probe(): ...``, a
    ``try``/``except``, a ``with``, a loop) but the one keeping the plain key: each definition of it that no later
    definition standing at the top level rebinds may be what the name holds when a call runs, so each is a function
    of its own, with the functions nested in it (the last of them keeps the plain key), and the whole-tree pass
    resolves a call of the name to all of them (``Resolver.alternatives``).  A name only the top level defines keeps
    its one definition, the last, as before; the qualified name stays the plain one (what a finding names)."""
    defs: dict = {}
    top = {id(stmt) for stmt in body}
    for stmt in _nested_defs(body):
        if type(stmt) is ast.FunctionDef or type(stmt) is ast.AsyncFunctionDef:
            defs.setdefault(stmt.name, []).append(stmt)
    out: dict = {}
    for name, found in defs.items():
        if len(found) < 2 or all(id(stmt) in top for stmt in found):
            continue
        live = [stmt for index, stmt in enumerate(found) if not any(id(later) in top for later in found[index + 1:])]
        for stmt in live[:-1]:
            out[id(stmt)] = f"@{stmt.lineno}"
    return out


#: the statements whose blocks :func:`_nested_defs` looks into
_TRIES = tuple(t for t in (ast.Try, getattr(ast, "TryStar", None)) if t is not None)
_DEF_HOLDERS = (ast.If, ast.With, ast.AsyncWith, ast.For, ast.While) + _TRIES


def _nested_defs(body, out: Optional[list] = None) -> list:
    """Definitions directly in a body, including those under if/try/with, in
    source order (a list: each body's is asked for twice, by the function
    holding it and by the walk into it)."""
    if out is None:
        out = []
    for stmt in body:
        t = type(stmt)
        if t in DEFINITIONS:
            out.append(stmt)
        elif t in _DEF_HOLDERS:
            _nested_defs(stmt.body, out)
            if t in _TRIES:
                _nested_defs(stmt.orelse, out)
                _nested_defs(stmt.finalbody, out)
                for handler in stmt.handlers:
                    _nested_defs(handler.body, out)
            elif t is not ast.With and t is not ast.AsyncWith:
                _nested_defs(stmt.orelse, out)
    return out


#: the methods a call to a class runs first


def extract_file_facts(path: str, data: bytes, settings: Settings, knowledge: Knowledge,
                       tree: Optional[ast.Module] = None, module: Optional[str] = None,
                       deep_names: Optional[set] = None, already_deep: Optional[frozenset] = None,
                       raising: Optional[frozenset] = None, deferred: Optional[dict] = None,
                       scanned: Optional[list] = None) -> FileFacts:
    """Parse (unless given a tree) and extract one file's facts.  Errors
    (syntax, encoding) come back in ``FileFacts.error``; never raises for bad
    input.

    ``already_deep``: positions of the functions an earlier extraction of the
    same bytes analysed in depth.  Only functions that are deep now and were
    not then are extracted, and the result is a patch for
    :func:`merge_partial` (the other summaries do not depend on
    ``deep_names``).

    ``raising``: the file is read only for what some of its functions
    raise (:attr:`~cslint.analysis.program.Program.callees`): only the
    functions of those qualified names (a class's name: its constructors)
    are extracted, whatever they reach.

    ``deferred``: a dict, where the summaries no statement of which can
    write a field are left pending
    (:class:`~cslint.analysis.records.PendingFuncFacts`): their positions
    in ``functions`` -> (:class:`FunctionInfo`, the names they call) go
    there, for :func:`summarised` when something reads them.

    ``scanned``: a list kept with the syntax tree of the file: empty, it
    gets what the call scans of this extraction found (one entry per
    function, in order); filled by an earlier extraction of the same tree
    (a re-analysis patch), the scans are taken from it instead of walking
    every function again."""
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
    ctx = ModuleContext(path, module, tree, knowledge, settings, os.path.basename(path) == "__init__.py")
    ctx.deep_names = set(deep_names or ())
    ctx.may_hold_walrus = (":=" if isinstance(data, str) else b":=") in data
    ctx.walrus_binds_size = ctx.may_hold_walrus and walrus_may_bind_size(data)
    ctx.may_make_sets = may_make_sets(data)
    ctx.may_cut_pieces = may_cut_pieces(data)
    facts.imports = ctx.imports
    extractors: list = []
    classes: list = []
    try:
        _walk_defs(ctx, tree.body, "", None, extractors, classes, False)
        if raising is not None:
            # read for what these raise alone: their summaries (the tests
            # above their raises), nothing of the rest
            facts.classes = classes
            wanted = raising | {f"{name}.{method}" for name in raising for method in CONSTRUCTORS}
            called = _scanned_with_own_helpers(wanted, extractors)
            for info in extractors:
                if id(info) in called:
                    facts.functions.append(extract_function(info, False, called[id(info)])[0])
                    facts.defined_names.add(info.qualname.rsplit(".", 1)[-1])
            return facts
        module_body = FunctionInfo(ctx, tree, "<module>", None, False, {n: n for n in ctx.module_functions})
        facts.classes = classes
        everyone = extractors + [module_body]
        if scanned and len(scanned) == len(everyone):  # a patch on the tree an earlier extraction scanned
            scans = [info.restore_scan(state) for info, state in zip(everyone, scanned)]
        else:
            scans = [info.scan_calls() for info in everyone]
            if scanned is not None:
                scanned[:] = [info.scan_state(scan) for info, scan in zip(everyone, scans)]
        ctx.scanned = (module_body, {id(info.func): info for info in extractors})
        fill_bound_names(classes, ctx.class_body_names, everyone)
        facts.foreign_stores = file_foreign_stores(everyone)
        facts.value_names = frozenset().union(*(info.value_names for info in everyone),
                                              *(info.self_value_names for info in everyone if not info.class_key))
        facts.self_value_reads = frozenset((info.class_key, name) for info in everyone
                                           if info.self_value_names and info.class_key
                                           for name in info.self_value_names)
        deep_names = set(ctx.deep_names)
        deep = [scan.has_collective for scan in scans]
        # matched once per function, not once per round of the loop below
        calls_wild = [not deep[i] and ctx.calls_a_wild_collective(scan.names) for i, scan in enumerate(scans)]
        typed = typed_entries(deep_names)
        if typed:  # another file's method reaching a collective through its own class's helper
            calls_wild = [wild or (not deep[i] and calls_typed_wrapper(everyone[i], scans[i].names, typed))
                          for i, wild in enumerate(calls_wild)]
        qualified = module_entries(deep_names)
        if qualified:  # another module's short-named function, called through that module
            calls_wild = [wild or (not deep[i] and calls_module_wrapper(everyone[i], scans[i].names, qualified))
                          for i, wild in enumerate(calls_wild)]
        # a class with no constructor of its own runs the one it inherits: ``Sub(group)`` is
        # deep when its base's constructor is (the base named as the file writes it)
        inheriting = [(made.name, [base.rpartition(".")[2] for base in ctx.class_bases.get(made.key, ())])
                      for made in classes if made.bases and CONSTRUCTORS.isdisjoint(made.methods)]
        changed = True
        while changed:  # functions of this file that call a deep one are deep too
            changed = False
            for i, extractor in enumerate(everyone):
                if deep[i]:
                    continue
                names = scans[i].names
                if calls_wild[i] or names & deep_names:
                    deep[i] = True
                    changed = True
            for i, extractor in enumerate(everyone):
                if deep[i]:
                    for short in called_as(extractor.qualname):
                        if short not in deep_names:
                            deep_names.add(short)
                            changed = True
            for name, bases in inheriting:
                if name not in deep_names and any(base in deep_names for base in bases):
                    deep_names.add(name)
                    changed = True
        # functions of this file that reach a collective, themselves or through the functions
        # they call: past the nesting limit a call of one keeps its arguments bound (results.py),
        # so what a helper agrees and hands on through another stays agreed
        ctx.issuing_functions = frozenset(info.qualname for info, is_deep in zip(everyone, deep) if is_deep)
        # a pipeline relay (no collective) agrees what it hands on, which only the dataflow reads (relays.py)
        deep = [deep[i] or bool(relay_receives(info.func, ctx.knowledge, scans[i].names))
                for i, info in enumerate(everyone)]
        if not any(deep):
            # Nothing here can reach a collective: keep the class structure
            # (for method resolution) and skip the value summaries, which only
            # matter next to code that does.
            facts.defined_names = {e.qualname.rsplit(".", 1)[-1] for e in extractors}
            facts.skipped = True
            facts.called_names = frozenset().union(*(scan.names for scan in scans))
            return facts
        if already_deep is not None:
            positions = tuple(i for i in range(len(everyone)) if deep[i] and i not in already_deep)
            facts.partial = positions
            for i in positions:
                func_facts, exit_env = extract_function(everyone[i], True, scans[i].names)
                facts.functions.append(func_facts)
                if any(site.collective for v in func_facts.variants.values() for site in v.sites):
                    facts.collective_functions.add(everyone[i].qualname.rsplit(".", 1)[-1])
                if everyone[i] is module_body:
                    facts.globals = _final_globals(exit_env)
            return facts
        for i, info in enumerate(everyone):
            if deferred is not None and not deep[i] and info is not module_body and writes_no_field(info):
                # left pending: summarised if the whole-tree pass reads it
                facts.functions.append(pending_function(info, scans[i].names, i))
                facts.defined_names.add(info.qualname.rsplit(".", 1)[-1])
                deferred[i] = (info, scans[i].names)
                continue
            if not deep[i] and info is not module_body and writes_no_field(info):
                # the summary a pending function gets when the pass reads it (the same on overflow)
                func_facts, exit_env = summarised_or_empty(info, scans[i].names, i), None
            else:
                func_facts, exit_env = extract_function(info, deep[i], scans[i].names)
            facts.functions.append(func_facts)
            facts.defined_names.add(info.qualname.rsplit(".", 1)[-1])
            if any(site.collective for v in func_facts.variants.values() for site in v.sites):
                facts.collective_functions.add(info.qualname.rsplit(".", 1)[-1])
            if info is module_body:
                facts.globals = _final_globals(exit_env)
    except RecursionError:
        facts.error = "source nests too deeply to analyse"
        facts.functions = []
    finally:
        # the scanned functions hold the context: kept on it they would make a cycle, which the run's
        # processes never collect (a pending summary filled later walks the module instead)
        ctx.scanned = None
    return facts
