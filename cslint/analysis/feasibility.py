"""Which paths of a function can run, given what every rank agrees on.

A collective that sits under a test of uniform configuration is reached only
when that configuration holds.  A caller whose own path has decided the
opposite never reaches it: an error handler that publishes at once only
when multi-rank attention-DP is off, calling a responder that gathers only
when it is on, issues no collective at all.  The CFG builder drops the
infeasible arm of every test it can *fold* to a constant; this module says
which tests fold:

* a mode predicate, under the mode assignment being analysed
  (``self.enable_attention_dp``);
* a test of the world's size: a hang needs at least two ranks, so the
  analysis reads every function as it runs in a world of several ranks
  (``world_size == 1`` is False, ``world_size != 1`` True), and whether
  torch.distributed is there at all is read the same way
  (``dist.is_initialized()`` and ``dist.is_available()`` are True: a job of
  several ranks that issues torch collectives has initialized the default
  group, so ``if not dist.is_initialized(): return flag`` is the
  single-process path of an agreement helper);
* a local bound once to a foldable expression
  (``multi_rank = self.enable_attention_dp and world_size != 1``);
* a parameter with a constant default (``aligned: bool = False``), under one
  assignment of such parameters, a :class:`CaseParam` -- what a call passes
  says which assignments it can be in (see :func:`call_allows`); a flag with
  a constant default that no test reads but a call is handed as it is
  (``step(is_profile)``) is one too, after those tests read: it folds
  nothing, but what the callee reaches under each of its values is what the
  caller reaches under that value (``program.handed_cases``);
* a local flag assigned nothing but constants, where every definition that
  reaches the test gives the same value (``publish = False`` ... ``if
  publish:``): a sparse conditional constant propagation that rebuilds the
  graph until no further test folds.

A call site then records the parameter assignments under which it can run
(``Site.when``); the whole-tree pass keeps, for every collective a function
reaches, the assignments under which it does, and a call whose constant
arguments (or the defaults it leaves) rule them all out reaches nothing.
"""

from __future__ import annotations

import ast
import itertools
from typing import NamedTuple, Optional

from . import cfg as cfgmod
from .controldependence import reachable
from .astwalk import defaulted_parameters, imported_names, walk as fast_walk, walked
from .function import FunctionInfo, mode_predicate_value
from .scope import canonical_text
from ..presets.rank_names import WORLD_RANK_NAMES, rank_name_dims
from .presence import none_test
from .grouptests import is_size_expr, single_rank_side
from .syntax import dotted, fold_bool_op

#: the value of a parameter whose default is ``None`` when the call passes
#: something else (its truth is not known)
NOT_NONE = "not-none"
#: the value of a local flag before its first assignment
_UNBOUND = object()
#: at most this many parameters are told apart (2 ** N graphs per mode)
MAX_CASE_PARAMS = 3
#: rebuilds of the graph while flags keep folding
MAX_FLAG_ROUNDS = 4
#: a local alias is followed this deep (an alias of an alias ...)
MAX_ALIAS_DEPTH = 4


class CaseParam(NamedTuple):
    """A parameter that a test reads and that has a constant default."""

    name: str
    index: int  # position in FuncFacts.params
    default: object  # True, False or None
    positional: bool = True  # False for a keyword-only parameter

    def value_of(self, constant) -> object:
        """The case value a passed constant selects."""
        if self.default is None:
            return None if constant is None else NOT_NONE
        return bool(constant)

    @property
    def values(self) -> tuple:
        return (None, NOT_NONE) if self.default is None else (False, True)


def is_world_size(expr: ast.expr, sizes) -> bool:
    """The size of the whole world: ``X.world_size``, ``world_size``,
    ``get_world_size()`` without a group, ``comm.Get_size()`` of the world
    communicator; a name that holds no size is none (``sizes``: the module's
    :class:`~cslint.analysis.sizereads.SizeReads`)."""
    if isinstance(expr, ast.Call):
        name = dotted(expr.func) or ""
        last = name.rsplit(".", 1)[-1]
        if last == "get_world_size":
            return not expr.args and not expr.keywords
        return last == "Get_size" and "COMM_WORLD" in name
    text = dotted(expr)
    return bool(text) and text.rsplit(".", 1)[-1] == "world_size" and is_size_expr(expr, sizes)


def _distributed_test(test: ast.expr, ctx) -> bool:
    """Whether ``test`` asks if this process is part of a distributed job
    (``dist.is_initialized()``, ``torch.distributed.is_available()``: a
    call of the presets' ``job_tests`` with no arguments): True in a world
    of several ranks."""
    if type(test) is not ast.Call or test.args or test.keywords:
        return False
    raw = dotted(test.func)
    knowledge = ctx.knowledge
    return bool(raw) and raw.rsplit(".", 1)[-1] in knowledge.job_test_names \
        and canonical_text(raw, ctx.imports) in knowledge.job_tests


def job_fields(ctx) -> frozenset:
    """The fields every ``self.attr = ...`` of the file sets to whether this
    process is part of a distributed job (``self.distributed =
    dist.is_initialized()``): True in a world of several ranks, as the call
    itself is (:func:`_distributed_test`).  Worked out once per file."""
    found = ctx.__dict__.get("_job_fields")
    if found is None:
        table: dict = {}
        for attr, value in ctx.field_writes:
            table[attr] = value is not None and _distributed_test(value, ctx) and table.get(attr, True)
        found = ctx.__dict__["_job_fields"] = frozenset(attr for attr, job in table.items() if job)
    return found


def _job_field(test: ast.expr, ctx) -> bool:
    """``self.distributed`` of a field :func:`job_fields` knows."""
    return type(test) is ast.Attribute and type(test.value) is ast.Name and test.value.id == "self" \
        and test.attr in job_fields(ctx)


def _world_test(test: ast.expr, sizes) -> Optional[bool]:
    """True/False for a comparison of the world's size with a constant, read
    in a world of several ranks; None for any other test."""
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return None
    left, right = test.left, test.comparators[0]
    if not (is_world_size(left, sizes) or is_world_size(right, sizes)):
        return None
    side = single_rank_side(test, sizes)
    return None if side is None else not side


class Feasibility:
    """The folds of one function (see the module docstring)."""

    def __init__(self, info: FunctionInfo):
        self.info = info
        self.specs = info.ctx.knowledge.modes
        self._tests: list = []
        self._bindings = _local_bindings(info, self._tests)
        self.aliases = {name: values[0] for name, values in self._bindings.items()
                        if len(values) == 1 and values[0] is not None}
        tested = self._tested_names()
        self.flags = frozenset(name for name, values in self._bindings.items()
                               if name in tested and values and all(isinstance(v, ast.Constant) for v in values))
        #: the case parameters a test reads, then those only handed on to a call (they fold nothing)
        self.tested_params, handed_params = self._case_params(tested)
        self.case_params = self.tested_params + handed_params

    # -- what there is to fold ----------------------------------------------------------
    def _case_params(self, tested: set) -> tuple:
        """``(the case parameters a test reads, those a call is only handed)``, at most
        ``MAX_CASE_PARAMS`` in all, the tested first."""
        func = self.info.func
        args = getattr(func, "args", None)
        if args is None:
            return (), ()
        defaults = {a.arg: d for a, d in defaulted_parameters(args)}
        keyword_only = {a.arg for a in args.kwonlyargs}
        out = []
        handed = []  # flags no test reads, which a call may be handed as they are
        for index, name in enumerate(self.info.params):
            d = defaults.get(name)
            if d is None or not isinstance(d, ast.Constant) or d.value not in (True, False, None) \
                    or type(d.value) not in (bool, type(None)):
                continue
            if name in self._bindings:
                continue  # rebound in the body
            if name not in tested:
                if type(d.value) is bool:
                    handed.append(CaseParam(name, index, d.value, name not in keyword_only))
                continue
            out.append(CaseParam(name, index, d.value, name not in keyword_only))
            if len(out) == MAX_CASE_PARAMS:
                break
        if not handed or len(out) == MAX_CASE_PARAMS:
            return tuple(out), ()
        passed = _passed_names(self.info, {param.name for param in handed})
        return tuple(out), tuple([param for param in handed if param.name in passed][:MAX_CASE_PARAMS - len(out)])

    def _tested_names(self) -> set:
        """Names the function's tests read, through local aliases too."""
        names = set()
        for test in self._all_tests():
            for sub in walked(test):
                if isinstance(sub, ast.Name):
                    names.add(sub.id)
        frontier = [n for n in names if n in self.aliases]
        seen = set()
        while frontier:
            name = frontier.pop()
            if name in seen:
                continue
            seen.add(name)
            for sub in walked(self.aliases[name]):
                if isinstance(sub, ast.Name) and sub.id not in names:
                    names.add(sub.id)
                    if sub.id in self.aliases:
                        frontier.append(sub.id)
        return names

    def _all_tests(self) -> list:
        """The tests of the function's own ``if`` and ``while`` statements."""
        return self._tests

    def needed(self) -> bool:
        """Whether any test of the function folds beyond its mode predicates."""
        if self.tested_params:
            return True
        sizes = self.info.ctx.size_reads
        for test in self._all_tests():
            for sub in fast_walk(test):
                if isinstance(sub, ast.Compare) and _world_test(sub, sizes) is not None:
                    return True
                if isinstance(sub, ast.Call) and _distributed_test(sub, self.info.ctx) \
                        or isinstance(sub, ast.Attribute) and _job_field(sub, self.info.ctx):
                    return True
                if isinstance(sub, ast.Name) and sub.id in self.flags:
                    return True
        return False

    # -- the folds -------------------------------------------------------------------------
    def fold(self, modes: Optional[frozenset], case: Optional[dict] = None):
        """The test folder under a mode assignment (None: no mode folds) and
        a parameter case (``{name: value}``), flags resolved."""
        flag_values: dict = {}
        base = self._folder(modes, case or {}, flag_values)
        if not self.flags:
            return base
        for _round in range(MAX_FLAG_ROUNDS):
            graph = cfgmod.build_cfg(self.info.func, base, exits=self.info.ctx.exit_exceptions,
                                     quiet=self.info.cfg_quiet, caught=self.info.ctx.caller_catches)
            found = _constant_flags(graph, self.flags)
            if found.items() <= flag_values.items():
                break
            flag_values.update(found)
        return base

    def _folder(self, modes: Optional[frozenset], case: dict, flag_values: dict) -> "TestFolder":
        return TestFolder(self.specs, self.info, self.aliases, modes, case, flag_values)

    # -- the parameter cases ------------------------------------------------------------------
    def cases(self) -> list:
        """Every assignment of the case parameters, as ``{name: value}``."""
        params = self.case_params
        return [dict(zip((p.name for p in params), values)) for values in case_assignments(params)]

    def live_calls(self, modes: Optional[frozenset]) -> Optional[dict]:
        """id(call) -> the indices of the cases (:meth:`cases`) under which
        its statement can run; None when no test reads a case parameter (every
        call runs under every case)."""
        if not self.tested_params:
            return None
        out: dict = {}
        tested = len(self.tested_params)
        cases = self.cases()
        graphs: dict = {}  # the tested parameters' values -> the indices of their cases (a flag only handed on folds nothing)
        for index, case in enumerate(cases):
            graphs.setdefault(tuple(case.values())[:tested], []).append(index)
        for indices in graphs.values():
            case = cases[indices[0]]
            graph = cfgmod.build_cfg(self.info.func, self.fold(modes, case), exits=self.info.ctx.exit_exceptions,
                                     quiet=self.info.cfg_quiet, caught=self.info.ctx.caller_catches)
            for n in reachable(graph):
                node = graph.nodes[n]
                if node.stmt is None:
                    continue
                for call_info in self.info.node_info(node).calls:
                    out.setdefault(id(call_info.call), set()).update(indices)
        return {key: frozenset(value) for key, value in out.items()}


def handed_flags(info: FunctionInfo) -> tuple:
    """The case parameters of a summarised function, whose tests fold
    nothing: its flags with a constant ``True``/``False`` default that it
    never rebinds and hands a call as they are (at most
    ``MAX_CASE_PARAMS``).  Each call's reach of a collective is then known
    for each of their values (``program.handed_cases``): ``def
    eplb_step(self, is_profile=False): self.state.step(is_profile)``."""
    args = getattr(info.func, "args", None)
    if args is None or not (args.defaults or any(d is not None for d in args.kw_defaults)):
        return ()  # (most functions)
    keyword_only = {a.arg for a in args.kwonlyargs}
    flags = {a.arg: (d.value, a.arg not in keyword_only) for a, d in defaulted_parameters(args)
             if type(d) is ast.Constant and type(d.value) is bool}
    if not flags:
        return ()
    info.ensure_scanned()  # (its scan notes the rebound parameters and the calls)
    passed = _passed_names(info, set(flags) - info.rebound_params)
    out = [CaseParam(name, index, *flags[name]) for index, name in enumerate(info.params) if name in passed]
    return tuple(out[:MAX_CASE_PARAMS])


def _passed_names(info: FunctionInfo, names: set) -> set:
    """Those of ``names`` that some call the function makes hands on bare,
    where :func:`forwarded_case_parameters` reads it, from the calls its
    scan noted."""
    out = set()
    if not names:
        return out
    info.ensure_scanned()  # (its scan notes the calls)
    for calls in info.calls_by_statement.values():
        for node in calls:
            out.update(name for _place, name in _bare_arguments(node) if name in names)
    return out


def _bare_arguments(call: ast.Call):
    """``(position or keyword, name)`` of each argument of ``call`` that is a
    bare name, where its place is known: a position before any ``*``
    spread, a named keyword (not ``**``)."""
    for position, arg in enumerate(call.args):
        if type(arg) is ast.Starred:
            break  # (the positions after it are not known)
        if type(arg) is ast.Name:
            yield position, arg.id
    for keyword in call.keywords:
        if keyword.arg is not None and type(keyword.value) is ast.Name:
            yield keyword.arg, keyword.value.id


def case_assignments(case_params: tuple) -> list:
    """Every assignment of ``case_params``, as value tuples in their order
    (the cases ``Site.when`` holds some of)."""
    return list(itertools.product(*(p.values for p in case_params)))


def call_allows(params: tuple, cases: frozenset, passed) -> bool:
    """Whether a call that passes ``passed`` (:func:`passed_value` for each
    case parameter: a case value, or ``...`` when unknown) can run in one
    of ``cases`` (value tuples in the order of ``params``)."""
    for case in cases:
        if all(p is ... or p == c for p, c in zip(passed, case)):
            return True
    return False


def constant_arguments(call: ast.Call) -> tuple:
    """(((position or keyword, value), ...) for the arguments that are
    constants, whether the call unpacks ``*args`` or ``**kwargs``)."""
    consts = []
    star = False
    for position, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            star = True
            break
        if isinstance(arg, ast.Constant):
            consts.append((position, _hashable(arg.value)))
    for keyword in call.keywords:
        if keyword.arg is None:
            star = True
        elif isinstance(keyword.value, ast.Constant):
            consts.append((keyword.arg, _hashable(keyword.value.value)))
    return tuple(consts), star


def forwarded_case_parameters(call: ast.Call, case_params: tuple) -> tuple:
    """``((position or keyword, index), ...)``: the arguments of ``call``
    that hand one of the calling function's case parameters on as it is (its
    bare name; a case parameter is never rebound in the body), ``index`` its
    place in ``case_params``.  The callee's parameter there then holds the
    caller's case value: ``def rearrange(self, is_profile=False): ...
    move(w, is_profile)`` passes ``move`` False wherever ``rearrange`` runs
    with its default."""
    if not case_params:
        return ()
    index = {param.name: i for i, param in enumerate(case_params)}
    return tuple((place, index[name]) for place, name in _bare_arguments(call) if name in index)


def _forwarded_value(param: CaseParam, value) -> object:
    """The case value of ``param`` where the caller hands it its own case
    parameter holding ``value``: a value that is not None has no known truth."""
    if value == NOT_NONE:
        return NOT_NONE if param.default is None else ...
    return param.value_of(value)


def passed_values(params: tuple, case_params: tuple, shift: int, consts: tuple, star: bool,
                  args: tuple, kwargs: tuple, forwarded: tuple = (), case: tuple = ()) -> tuple:
    """For each case parameter, the case value a call selects: the constant
    it passes, the default when it passes nothing there, ``...`` when it
    passes something else (or unpacks arguments).  ``shift``: how many
    leading parameters the call's positional arguments skip
    (``callrefs.receiver_shift``).  With ``case``, the calling function's
    case values: what the call hands on of them (``forwarded``,
    :func:`forwarded_case_parameters`) selects theirs."""
    constant = dict(consts)
    handed = dict(forwarded) if case else {}
    given_keywords = {name for name, _ in kwargs}
    out = []
    for param in case_params:
        position = param.index - shift if param.positional else -1
        at = param.name if param.name in handed else position
        if at in handed:
            out.append(_forwarded_value(param, case[handed[at]]))
            continue
        if param.name in constant and isinstance(param.name, str):
            out.append(param.value_of(constant[param.name]))
            continue
        if param.name in given_keywords:
            out.append(...)
            continue
        if 0 <= position < len(args):
            out.append(param.value_of(constant[position]) if position in constant else ...)
        elif star:
            out.append(...)
        else:
            out.append(param.value_of(param.default))
    return tuple(out)


def _local_bindings(info: FunctionInfo, tests: list) -> dict:
    """Local name -> the values bound to it by plain assignments (None for a
    binding of another kind: loop target, ``with``, augmented, unpacking...);
    the tests of ``if`` and ``while`` statements go to ``tests`` on the way.
    Read from the nodes the function's call scan noted
    (``FunctionScan.binding_nodes``: those of the body outside nested
    definitions and lambdas), not from a walk of the body of its own."""
    out: dict = {}
    nodes = info.binding_nodes if isinstance(getattr(info.func, "body", None), list) else ()
    declared = set()
    for node in nodes:
        kind = type(node)
        if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            out.setdefault(node.name, []).append(None)
            continue
        if kind is ast.If or kind is ast.While:
            tests.append(node.test)
        if kind in (ast.Global, ast.Nonlocal):
            declared.update(node.names)
        elif kind is ast.Assign:
            for target in node.targets:
                if isinstance(target, ast.Name):
                    out.setdefault(target.id, []).append(node.value if len(node.targets) == 1 else None)
                else:
                    _bind_other(target, out)
        elif kind is ast.AnnAssign:
            if isinstance(node.target, ast.Name):
                out.setdefault(node.target.id, []).append(node.value)
        elif kind is ast.AugAssign:
            _bind_other(node.target, out)
        elif kind in (ast.For, ast.AsyncFor, ast.comprehension):
            _bind_other(node.target, out)
        elif kind in (ast.With, ast.AsyncWith):
            for item in node.items:
                if item.optional_vars is not None:
                    _bind_other(item.optional_vars, out)
        elif kind is ast.NamedExpr:
            _bind_other(node.target, out)
        elif kind is ast.ExceptHandler and node.name:
            out.setdefault(node.name, []).append(None)
        elif kind in (ast.Import, ast.ImportFrom):
            for name in imported_names(node):
                out.setdefault(name, []).append(None)
        elif kind is ast.Delete:
            for target in node.targets:
                _bind_other(target, out)
    for name in declared:
        out[name] = [None]
    for name in info.params:
        if name.lstrip("*") in out:
            out[name.lstrip("*")].append(None)
    return out


def _bind_other(target: ast.AST, out: dict) -> None:
    for sub in walked(target):
        if isinstance(sub, ast.Name):
            out.setdefault(sub.id, []).append(None)
        elif isinstance(sub, ast.Starred) and isinstance(sub.value, ast.Name):
            out.setdefault(sub.value.id, []).append(None)


def _constant_flags(graph: cfgmod.CFG, flags: frozenset) -> dict:
    """id(Name node in a test) -> the one constant every definition reaching
    that test gives the flag; tests reached by several values are left out."""
    start = {name: frozenset((_UNBOUND,)) for name in flags}
    envs = {graph.entry: start}
    work = [graph.entry]
    while work:
        n = work.pop()
        env = envs[n]
        node = graph.nodes[n]
        out = env
        stmt = node.stmt
        if node.kind == cfgmod.STMT and stmt is not None:
            assigned = _assigned_constant(stmt, flags)
            if assigned:
                out = dict(env)
                for name, value in assigned:
                    out[name] = frozenset((value,))
        for succ, label in node.succs:
            if label == "never":
                continue
            old = envs.get(succ)
            new = out if old is None else {name: old[name] | out[name] for name in flags}
            if old is None or new != old:
                envs[succ] = new
                work.append(succ)
    found: dict = {}
    for n, env in envs.items():
        node = graph.nodes[n]
        if node.kind not in (cfgmod.TEST, cfgmod.LOOP) or not isinstance(node.stmt, (ast.If, ast.While)):
            continue
        for sub in walked(node.stmt.test):
            if isinstance(sub, ast.Name) and sub.id in flags:
                values = env.get(sub.id, ())
                if len(values) == 1:
                    (value,) = values
                    if value is not _UNBOUND:
                        found[id(sub)] = value
    return found


def _assigned_constant(stmt: ast.AST, flags: frozenset) -> list:
    if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant):
        return [(t.id, _hashable(stmt.value.value)) for t in stmt.targets
                if isinstance(t, ast.Name) and t.id in flags]
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id in flags \
            and isinstance(stmt.value, ast.Constant):
        return [(stmt.target.id, _hashable(stmt.value.value))]
    return []


def _hashable(value):
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


class TestFolder:
    """A test's truth under a mode assignment and a parameter case, flags
    resolved: True, False, or None when it is not known.  A class rather than
    a closure: a closure that calls itself is a reference cycle, which would
    keep the function's syntax tree and node facts alive until the next
    collection (the run's cyclic collector is off between collections)."""

    __slots__ = ("specs", "info", "aliases", "modes", "case", "flag_values")

    def __init__(self, specs, info, aliases, modes: Optional[frozenset], case: dict, flag_values: dict):
        self.specs = specs
        self.info = info
        self.aliases = aliases
        self.modes = modes
        self.case = case
        self.flag_values = flag_values

    def __call__(self, test: ast.expr, depth: int = 0) -> Optional[bool]:
        kind = type(test)
        if kind is ast.UnaryOp and isinstance(test.op, ast.Not):
            inner = self(test.operand, depth)
            return None if inner is None else not inner
        if kind is ast.BoolOp:
            values = [self(v, depth) for v in test.values]
            return fold_bool_op(test.op, values)
        if kind is ast.Constant:
            return bool(test.value)
        case = self.case
        if kind is ast.Name:
            if id(test) in self.flag_values:
                return bool(self.flag_values[id(test)])
            if test.id in case:
                value = case[test.id]
                return None if value == NOT_NONE else bool(value)
            alias = self.aliases.get(test.id)
            if alias is not None and depth < MAX_ALIAS_DEPTH:
                return self(alias, depth + 1)
        if kind is ast.Call:
            return True if _distributed_test(test, self.info.ctx) else None
        if kind is ast.Attribute and _job_field(test, self.info.ctx):
            return True
        if kind is ast.Compare:
            world = _world_test(test, self.info.ctx.size_reads)
            if world is not None:
                return world
            tested = none_test(test)
            if tested is not None and tested[0] in case:
                is_none = case[tested[0]] is None
                return is_none if tested[1] else not is_none
            return None
        if self.modes is None or not self.specs:
            return None
        return mode_predicate_value(self.info, test, self.specs, self.modes)


# -- world rank 0 ---------------------------------------------------------------------------

#: the first-rank fact of an operand that holds on world rank 0 alone (``rank == 0``)
FIRST_RANK_ROOT = "root"


def first_rank_facts(test: ast.expr, fold, sizes=()) -> tuple:
    """For an ``or`` test, one fact per operand about world rank 0, which
    is rank 0 of every group it belongs to and lies in the first stage:
    :data:`FIRST_RANK_ROOT` for a test that holds on world rank 0 alone
    (``dist.rank == 0``); the dimensions whose groups must have several
    ranks for the operand to hold on world rank 0 (``is_first_pp_rank and
    tp_size > 1``: ``{tp}``; empty: it always holds there); None when not
    known.  ``fold``: the function's test folder (modes, aliases), or None;
    ``sizes``: the module's :class:`~cslint.analysis.sizereads.SizeReads`.
    () for any other test."""
    if type(test) is not ast.BoolOp or not isinstance(test.op, ast.Or):
        return ()
    return tuple(FIRST_RANK_ROOT if _world_rank_zero(value) else _holds_on_first_rank(value, fold, 0, sizes)
                 for value in test.values)


def _world_rank_zero(test: ast.expr) -> bool:
    """``<world rank> == 0`` (either way round): the world rank read by name
    (``self.dist.rank``, ``global_rank``) or by ``get_rank()`` with no group."""
    if type(test) is not ast.Compare or len(test.ops) != 1 or type(test.ops[0]) is not ast.Eq:
        return False
    left, right = test.left, test.comparators[0]
    if type(left) is ast.Constant:
        left, right = right, left
    if type(right) is not ast.Constant or right.value != 0 or type(right.value) is not int:
        return False
    if type(left) is ast.Call:
        return not left.args and not left.keywords and (dotted(left.func) or "").rsplit(".", 1)[-1] == "get_rank"
    text = dotted(left) or ""
    return text.rsplit(".", 1)[-1] in WORLD_RANK_NAMES


def _holds_on_first_rank(test: ast.expr, fold, depth: int, sizes) -> Optional[frozenset]:
    """The dimensions whose groups must have several ranks for ``test`` to
    hold on world rank 0 (see :func:`first_rank_facts`), or None."""
    settled = fold(test) if fold is not None else None
    if settled is not None:
        return frozenset() if settled else None
    kind = type(test)
    if kind is ast.BoolOp:
        parts = [_holds_on_first_rank(value, fold, depth, sizes) for value in test.values]
        if isinstance(test.op, ast.And):
            return None if None in parts else frozenset().union(*parts)
        held = [part for part in parts if part is not None]
        return min(held, key=len) if held else None
    if kind is ast.Name and depth < MAX_ALIAS_DEPTH:
        alias = getattr(fold, "aliases", {}).get(test.id)
        if alias is not None:
            return _holds_on_first_rank(alias, fold, depth + 1, sizes)
    if kind in (ast.Name, ast.Attribute):
        # rank 0 of the world is the first rank of each of its groups (``is_first_pp_rank``)
        name = (dotted(test) or "").rsplit(".", 1)[-1].lower().lstrip("_")
        return frozenset() if name.startswith("is_first") and rank_name_dims(name) is not None else None
    if kind is not ast.Compare or len(test.ops) != 1:
        return None
    if single_rank_side(test, sizes) is False:  # holds where the group has several ranks (``tp_size > 1``)
        return _size_dims(test)
    left, right = test.left, test.comparators[0]
    if type(left) is ast.Constant:
        left, right = right, left
    if type(test.ops[0]) is ast.Eq and type(right) is ast.Constant and right.value == 0 \
            and type(right.value) is int:
        name = (dotted(left) or "").rsplit(".", 1)[-1]
        return frozenset() if name and rank_name_dims(name) is not None else None  # ``pp_rank == 0``
    return None


def _size_dims(test: ast.Compare) -> Optional[frozenset]:
    """The dimensions of the group whose size ``test`` compares (``tp_size``: ``{tp}``)."""
    for side in (test.left, test.comparators[0]):
        node = side.func if type(side) is ast.Call else side
        name = (dotted(node) or "").rsplit(".", 1)[-1].lower().lstrip("_")
        if name.startswith("get_"):
            name = name[len("get_"):]
        if name.endswith("_size"):
            dims = rank_name_dims(name[: -len("_size")] + "_rank")
            if dims:
                return dims
    return None
