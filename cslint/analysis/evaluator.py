"""Expression evaluation: the atoms an expression's value depends on, given the atoms of the function's variables
(``env``).

Names and attributes are looked up in ``env``, then in the configuration and the presets (rank-local sources, uniform
values), then as fields of ``self`` and module-level variables; calls are collectives (uniform over their group),
sources named by their text, or results of analysed functions (:class:`~cslint.analysis.atoms.CallResult`, resolved
by the whole-tree pass), a module-level name that only ever holds a function as each of them (``funcaliases.py``).
An exception's divergence (``Evaluator.raised_atoms``, from :class:`~cslint.analysis.exceptionreads.ExceptionReads`) is
evaluated the same way."""

from __future__ import annotations

import ast
import contextlib
from fnmatch import fnmatchcase as _fnmatch
from typing import Optional

from ..config import matches_any
from ..presets import KIND_RANK_ID
from ..presets.rank_names import rank_name_dims
from .astwalk import COMPREHENSIONS, iter_children
from .callfacts import payload_argument
from .callplans import ARGUMENTS, FIRST_ARGUMENT, FIXED, OPEN, plan_call
from .atoms import (
    ATTRIBUTE_KEEPS, CONTENTS, DEVICE_KIND, ELEMENTS_HELD, EMPTY, IDENTITY_KINDS, LENGTH, PASSED_NO_DATA_TEST, PLACED,
    SHAPE, WHOLE, attribute, field_read, global_read, hold, project, source, whole,
)
from .environment import fork
from .exceptionreads import ExceptionReads
from .function import FunctionInfo
from .funcaliases import alias_calls, local_alias_calls
from .iteration import zip_arguments
from .positions import alike_displays, own_arguments
from .spreadlengths import statement_holding, written_length
from .spreads import call_arguments
from .raises import of_own_package
from .rebuilds import rebuilds_of, rebuilt_apart
from .results import keeps_arguments_bound
from .scope import UNIFORM_TEXT, canonical_text
from .setfields import field_key
from .structure import StructureReads, builds_library_object, containers_held, rows_alike
from .grouptests import single_rank_side
from .ownstructure import scalar_kind
from .syntax import dotted, unparse
from .tensorarms import made_tensor_call
from .typetests import NOTHING_NARROWED, TYPE_TEST_CALLEES, narrowed_reads
from .unanimity import unanimous_values
from .vocabulary import (
    ALL_MODES_ALL_DIMS, LIBRARY_PART_CALLS, PLACEMENT_KEYWORDS,
    PLACEMENT_METHODS, PROGRESS_WRAPPERS, RANK_ENV_VARS,
    PLACE_CLASSES, STRUCTURE_ATTRIBUTES, WHOLLY_HELD_CLASSES, WHOLLY_HELD_NAMES,
)

_IGNORED_CHILDREN = (ast.expr_context, ast.operator, ast.boolop, ast.cmpop, ast.unaryop)
#: the last names of library calls whose result may only hold its arguments (:func:`_held`)
_HOLDING_NAMES = PLACEMENT_METHODS | WHOLLY_HELD_NAMES



class ReadWatch:
    """The variables read while it is set, each with what its first read
    gave; ``changed`` once a read or a write (told by the walker) finds
    another value there."""

    __slots__ = ("values", "changed")

    def __init__(self):
        self.values: dict = {}  # name -> what its first read gave (None: unbound)
        self.changed = False

    def read(self, name, value) -> None:
        values = self.values
        if name not in values:
            values[name] = value
        elif not self.changed:
            seen = values[name]
            if seen is not value and seen != value:
                self.changed = True


class Evaluator(StructureReads, ExceptionReads):
    """Evaluates the expressions of one function; one per function, shared by its summary walk, its dataflow and
    its guard classification."""

    def __init__(self, info: FunctionInfo):
        self.info = info
        self.ctx = info.ctx
        self.atoms = info.ctx.atoms
        self._static: dict = {}  # results of expressions that read no variable, by node (whatever the variables)
        self.set_fields: frozenset = frozenset()  # the fields the dataflow keeps apart (setfields.SetFields)
        self._uniform_texts = ()
        self._env_reads = 0
        self.watch: Optional[ReadWatch] = None  # notes the variables read, while set
        # The summary walk evaluates a statement's call arguments twice (for the parameter flow of its calls, then
        # for the statement's value) under the same variables; this keeps the first result for the rest of the
        # statement.  None outside the summary walk.
        self.args_memo: Optional[dict] = None
        self._containers: Optional[frozenset] = None  # see StructureReads
        self._alike: Optional[frozenset] = None  # see StructureReads.picks_alike
        self._call_plans: dict = {}  # id(call) -> what its text decides (plan_call)
        self._read_through: set = set()  # id(attribute) of those whose text decides nothing
        self._local_names: Optional[set] = None  # the function's local names, once scanned
        self._differences: dict = {}  # (id(upper), id(lower)) -> their linear difference (StructureReads.span)
        self._bindings: Optional[dict] = None  # names bound once and their values (StructureReads.span)
        self._same_branches: dict = {}  # id(``a if c else b``) -> whether a and b yield the same elements
        self._narrowed: Optional[frozenset] = None  # the reads a type test narrows (typetests.py), once scanned
        self._spread_lengths: dict = {}  # id(``*xs`` in a call) -> how many elements xs holds on every rank, or None

    @contextlib.contextmanager
    def uniform(self, texts: set):
        """Evaluate with the expressions whose text is in ``texts`` taken as
        uniform (the color of a split communicator, for its members)."""
        saved = self._uniform_texts
        self._uniform_texts = texts
        self._static = {}
        try:
            yield
        finally:
            self._uniform_texts = saved
            self._static = {}

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
            local_names = self._local_names
            if local_names is None:
                local_names = self._local_names = self.info.local_names
            if name in local_names:
                self._env_reads += 1
                bound = name in env
                if self.watch is not None:
                    self.watch.read(name, env[name] if bound else None)
                if bound:
                    narrowed = self._narrowed
                    if narrowed is None:
                        narrowed = self._narrowed = (
                            narrowed_reads(self.info) if not self.info.callee_names.isdisjoint(TYPE_TEST_CALLEES)
                            else NOTHING_NARROWED)
                    if narrowed and id(expr) in narrowed:
                        return project(PASSED_NO_DATA_TEST, env[name])
                    return env[name]
        else:
            if self._uniform_texts and ast.unparse(expr) in self._uniform_texts:
                return EMPTY
            static, key = self._static, id(expr)
            if key in static:  # (``in`` and a subscript, not a call of get: most expressions were read before)
                cached = static[key]
                if cached is not None:
                    return cached
            before = self._env_reads
            result = self._eval(expr, env, t)
            if self._env_reads == before:
                self._static[key] = result
            return result
        return self._eval(expr, env, t)

    def _eval(self, expr, env: dict, t) -> frozenset:
        if t is ast.Name:
            return self._eval_name(expr, env)
        if t is ast.Attribute:
            return self._eval_attribute(expr, env)
        if t is ast.Call:
            return self._eval_call(expr, env)
        if t is ast.BinOp:
            if type(expr.op) is ast.Mult:
                return self.display(expr, env)  # ``[x] * n``: n is the length
            return self.eval(expr.left, env) | self.eval(expr.right, env)
        if t is ast.Tuple or t is ast.List:
            atoms = EMPTY
            for element in expr.elts:
                atoms |= self.eval(element, env)
            return atoms
        if t is ast.Compare:
            if self._tests_group_membership(expr):
                return self.membership_value(expr)
            if len(expr.ops) == 1:
                tested = _rank_presence_operand(expr)
                if tested is not None and _names_a_rank(tested, self.ctx):
                    # ``local_rank != -1``: a rank id is never negative, so the
                    # test only asks whether a rank was given at all, which the
                    # launcher decides alike for every process
                    return frozenset(a for a in self.eval(tested, env) if not (a.tag == "S" and a.kind == KIND_RANK_ID))
            return self._eval_compare(expr, env)
        if t is ast.IfExp:
            same = self._same_branches.get(id(expr))
            if same is None:  # compared by text: once per expression, not once per pass
                same = self._same_branches[id(expr)] = same_elements(expr.body, expr.orelse)
            if same:
                # `tqdm(xs) if rank == 0 else xs`: either side yields the same
                return self.eval(expr.body, env) | self.eval(expr.orelse, env)
            # which value comes out, hence its structure, follows the test.
            # `a if size == 1 else b`: `a` is only taken where the group has
            # one rank, so nothing it holds can differ between ranks there
            # (the statement-level rule for `if world_size > 1: ... else: ...`)
            side = single_rank_side(expr.test, self.ctx.size_reads)
            test = project(_picked(expr), self.truth(expr.test, env))
            if side is True:
                return test | self.eval(expr.orelse, env)
            if side is False:
                return test | self.eval(expr.body, env)
            return test | self.eval(expr.body, env) | self.eval(expr.orelse, env)
        if t is ast.BoolOp:
            # ``a or b`` is ``a`` or ``b`` by ``a``'s truth
            values = unanimous_values(self, expr, env)
            atoms = self.eval(values[-1], env)
            for value in values[:-1]:
                atoms |= self.eval(value, env) | whole(self.truth(value, env))
            return atoms
        if t is ast.UnaryOp and type(expr.op) is ast.Not:
            return project(CONTENTS, self.truth(expr.operand, env))
        if t is ast.Slice:
            # which elements: the bounds; how many: what their difference reads
            return self.span(expr.lower, expr.upper, expr.step, env)
        if t is ast.Set:
            # a set's elements decide its size
            atoms = EMPTY
            for child in iter_children(expr):
                atoms |= self.eval(child, env)
            return whole(atoms)
        if t is ast.Dict:
            return self.display(expr, env)
        if t in COMPREHENSIONS:
            self._env_reads += 1
            inner = fork(env)  # the comprehension's own names, over a shared copy of a large environment
            # the statement's argument memo was filled in the enclosing scope,
            # where the comprehension's own names (``for rank in ...``) are unbound
            memo, self.args_memo = self.args_memo, None
            try:
                atoms = self.generated(expr, inner)
                if t is ast.DictComp:
                    return atoms | whole(self.eval(expr.key, inner)) | self.eval(expr.value, inner)
                if t is ast.SetComp:
                    return atoms | whole(self.eval(expr.elt, inner))
                return atoms | self.eval(expr.elt, inner)
            finally:
                self.args_memo = memo
        if t is ast.Lambda:
            return EMPTY
        if t is ast.NamedExpr:
            return self.eval(expr.value, env)
        if t is ast.Subscript:
            ctx = self.ctx
            if isinstance(expr.slice, ast.Constant) and expr.slice.value in RANK_ENV_VARS:
                base = canonical_text(dotted(expr.value), ctx.imports)
                if base in ("os.environ", "environ"):
                    return frozenset({source(KIND_RANK_ID, f"environment variable {expr.slice.value}", ctx.path,
                                             expr.lineno, ALL_MODES_ALL_DIMS)})
            if type(expr.value) is ast.Name and type(expr.slice) is ast.Constant:
                entry = env.get(("key", expr.value.id, expr.slice.value))
                if entry is not None:
                    self._env_reads += 1
                    return entry
            # the element a rank-local index picks is another object with its own structure (``queues[rank]``),
            # unless it is one of a list's elements built alike, or a row of an array (:func:`rows_alike`)
            alike = rows_alike(self, expr)
            if alike is not None:
                return self.eval(expr.value, env) | project(alike, self.eval(expr.slice, env))
            return self.element_read(expr, env)
        atoms = EMPTY
        for child in iter_children(expr):
            if isinstance(child, _IGNORED_CHILDREN):
                continue
            atoms |= self.eval(child, env)
        return atoms

    def trip_count(self, iterable, env: dict) -> frozenset:
        """What the number of times a loop over ``iterable`` runs depends on:
        its own structure (:meth:`own_structure`, also through the wrappers
        that keep its elements, and the builtins that keep their number:
        ``enumerate``, ``reversed``, ``sorted``); ``zip``'s, its arguments'."""
        inner = unwrapped_iterable(iterable)
        while type(inner) is ast.Call and type(inner.func) is ast.Name and inner.func.id in _COUNT_KEEPING \
                and inner.args and type(inner.args[0]) is not ast.Starred and self._is_builtin(inner.func.id):
            inner = unwrapped_iterable(inner.args[0])
        zipped = zip_arguments(inner, self)
        if zipped is not None:
            return EMPTY.union(*[self.trip_count(arg, env) for arg in zipped])  # each already a count
        own = self.kept_apart(inner, env)
        return project(LENGTH, self.eval(iterable, env) if own is None else own)

    def _eval_name(self, expr: ast.Name, env: dict) -> frozenset:
        ctx = self.ctx
        settings = ctx.settings
        name = expr.id
        if self.watch is not None:
            self.watch.read(name, env.get(name))
        if name in env:
            return env[name]
        if settings.uniform and matches_any(name, settings.uniform):
            return EMPTY
        if settings.rank_local and matches_any(name, settings.rank_local):
            return frozenset({source("rank-local (configured)", name, ctx.path, expr.lineno, ALL_MODES_ALL_DIMS)})
        for spec in ctx.knowledge.candidates("sources", name):
            if spec.what == "value" and "." not in spec.pattern and _fnmatch(name, spec.pattern):
                return frozenset({source(spec.kind, name, ctx.path, expr.lineno, spec.dims)})
        if name in ctx.module_globals:
            return frozenset({global_read(ctx.module, name)})
        dims = rank_name_dims(name)
        if dims is not None:
            return frozenset({source(KIND_RANK_ID, name, ctx.path, expr.lineno, (("*", dims),))})
        return EMPTY

    def _eval_attribute(self, expr: ast.Attribute, env: dict) -> frozenset:
        if id(expr) in self._read_through:
            return self._attribute_of(expr, env)
        text = dotted(expr)
        if text is not None:
            norm = self.info.normalise_self(text)
            verdict = self.ctx.attribute_text_verdict(text, norm, expr.attr)
            if verdict is not None:
                if verdict is UNIFORM_TEXT:
                    return EMPTY
                return frozenset({source(verdict[0], norm, self.ctx.path, expr.lineno, verdict[1])})
        if (attr := self.info.self_attr(expr)) is not None:
            held = env.get(field_key(attr)) if attr in self.set_fields else None  # what it set (setfields)
            self._env_reads += held is not None
            if held is not None:
                return held
            if attr in self.info.rebuild_fields and id(expr) in rebuilds_of(self.info).reads:
                attr = rebuilt_apart(attr)  # in the construction of the object the field is rebuilt with
            return frozenset({field_read(self.info.class_key, attr)})
        # nothing in the text decides: the next evaluation goes straight to the object
        self._read_through.add(id(expr))
        return self._attribute_of(expr, env)

    def _named_by_text(self, expr: ast.Attribute) -> bool:
        """Whether the text of ``obj.attr`` alone decides what it is (a configured or preset source, a uniform text)."""
        text = dotted(expr)
        return text is not None \
            and self.ctx.attribute_text_verdict(text, self.info.normalise_self(text), expr.attr) is not None

    def _attribute_of(self, expr: ast.Attribute, env: dict) -> frozenset:
        """``obj.attr`` read from what ``obj`` holds (``shape``, ``dtype``: off the value, never a field)."""
        if expr.attr in STRUCTURE_ATTRIBUTES:
            return project(ATTRIBUTE_KEEPS.get(expr.attr, SHAPE), self.eval(expr.value, env))
        placed = expr.value
        if expr.attr == "type" and type(placed) is ast.Attribute and placed.attr == "device" \
                and self.info.self_attr(placed) is None and not self._named_by_text(placed):
            # the kind of device a value lives on (atoms.DEVICE_KIND)
            return attribute(self.eval(placed.value, env), DEVICE_KIND)
        return attribute(self.eval(expr.value, env), expr.attr)

    def args(self, call: ast.Call, env) -> tuple:
        """(atoms per positional argument, (keyword, atoms) pairs) of a call."""
        memo = self.args_memo
        if memo is not None:
            found = memo.get(id(call))
            if found is not None:
                # a result taken from the memo read what its evaluation read:
                # what is made of it depends on the variables just as much
                # (else :meth:`eval` would keep it as the same everywhere)
                self._env_reads += found[2]
                return found[0], found[1]
        before = self._env_reads
        evaluate = self.eval
        args, kwargs = call_arguments(call, env, evaluate, self.info, self.spread_length)  # (spreads.py)
        if memo is not None:
            memo[id(call)] = (args, kwargs, self._env_reads - before)
        return args, kwargs

    def spread_length(self, spread: ast.Starred, call: ast.Call) -> Optional[int]:
        """How many elements the sequence ``call`` spreads at ``spread``
        holds on every rank, where the syntax writes it out
        (:func:`~cslint.analysis.spreadlengths.written_length`); else None."""
        lengths = self._spread_lengths
        key = id(spread)
        if key not in lengths:
            statement = statement_holding(self.info, call)
            lengths[key] = None if statement is None else \
                written_length(spread.value, self.info, statement, self._is_builtin)
        return lengths[key]

    def _eval_call(self, call: ast.Call, env) -> frozenset:
        plan = self._call_plans.get(id(call))
        if plan is None:
            plan = self._call_plans[id(call)] = plan_call(self, call)
        args, kwargs = self.args(call, env)
        if kwargs:
            arg_atoms = EMPTY.union(*args, *[a for _, a in kwargs])
        elif args:
            arg_atoms = args[0].union(*args[1:]) if len(args) > 1 else args[0]
        else:
            arg_atoms = EMPTY
        verdict = plan[0]
        if verdict is OPEN and type(call.func) is ast.Name and call.func.id not in env \
                and (aliased := alias_calls(self.ctx, call)) is not None:  # a name only ever holding functions
            return EMPTY.union(*[self._eval_call(alternative, env) for alternative in aliased])
        if verdict is OPEN and type(call.func) is ast.Name \
                and (aliased := local_alias_calls(self.info, call)) is not None:  # a local holding bound methods
            return EMPTY.union(*[self._eval_call(alternative, env) for alternative in aliased])
        if verdict is OPEN:
            _, builtin, last, raw = plan
            if builtin is not None:
                read = self.builtin_read(builtin, call, args, kwargs, arg_atoms, env)
                if read is not None:
                    return read
            func = call.func
            receiver = self.eval(func.value, env) if type(func) is ast.Attribute else EMPTY
            # asked only now, after the receiver's calls: the receiver types behind a reference (receivers.py)
            # are worked out in the order the references are asked
            ref = self.info.resolve_ref(func)
            # what an unresolved call depends on (a callee of the tree is read
            # from its own summary instead)
            kwargs_seen = kwargs
            if kwargs and arg_atoms:
                kwargs_seen, arg_atoms = _placed(call, args, kwargs, arg_atoms, self.ctx.imports)
            if last in LIBRARY_PART_CALLS:
                receiver, arg_atoms = self.library_call_parts(func, last, receiver, args, kwargs_seen, arg_atoms)
            if arg_atoms and last is not None and (last in _HOLDING_NAMES or "A" <= last.lstrip("_")[:1] <= "Z"):
                if args and builds_library_object(last, ref):
                    arg_atoms = containers_held(self, call, args, kwargs_seen, arg_atoms, env)
                arg_atoms = _held(self, call, last, ref, args, kwargs_seen, arg_atoms, env)
            fallback = receiver | arg_atoms
            if ref is not None:
                # (a class of the file too: each argument reaches its own field; and any function
                # of the file, which the whole-tree pass always resolves: flattened inside a later
                # call, its result is what its summary returns of its arguments, never all of them; and a
                # function of another module of the tree, read likewise where the whole-tree pass resolves
                # it and from its fallback, the arguments as passed, where it does not)
                bind = ref.tag == "class" or ref.tag == "func" \
                    or (ref.tag == "qual" and may_resolve_in_tree(ref, self.ctx)) \
                    or keeps_arguments_bound(ref, self.ctx, self.info.class_key) \
                    or receiver_of_tree(ref, self.ctx)
                kwargs += own_arguments(self, call, args, env)  # what the callee's parameter own parts read
                made = self.atoms.call(ref, args, kwargs, fallback, self.ctx.path, call.lineno, raw or "call", bind,
                                       receiver, alike_displays(call))
                if ref.tag == "chosen":
                    # ``W = Leader if rank == 0 else Follower; w = W(g)``: which class builds the object follows
                    # the test that chose it, as ``Leader(g) if rank == 0 else Follower(g)`` does
                    return made | self.eval(func, env)
                return made
            return fallback
        if verdict is FIXED:
            return plan[1]
        if verdict is ARGUMENTS:
            return arg_atoms if len(plan) == 1 else project(plan[1], arg_atoms)
        if verdict is FIRST_ARGUMENT:
            return args[0]
        # a uniform collective
        spec = plan[2]
        return self.atoms.collective(plan[1], _contributed(self.eval, call, spec, env, arg_atoms))


def _contributed(evaluate, call: ast.Call, spec, env, arg_atoms: frozenset) -> frozenset:
    """What a uniform collective's result is made of: the value each rank
    contributes (the payload the spec names), not the arguments that say
    where it goes (this rank's id, the source, the group); every argument
    when the call passes no payload where the spec says."""
    payload = payload_argument(call, spec)
    return arg_atoms if payload is None else evaluate(payload, env)


def _names_a_rank(node, ctx) -> bool:
    """Whether an expression reads this process's rank itself (not a value
    looked up with it): a variable or field named for a rank (``local_rank``,
    ``self._node_rank``), or a launcher variable read from the environment
    (``os.environ.get("RANK")``, ``os.environ["RANK"]``, through ``int()``)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "int" \
            and len(node.args) == 1:
        node = node.args[0]
    if isinstance(node, ast.Name):
        return rank_name_dims(node.id) is not None
    if isinstance(node, ast.Attribute):
        return rank_name_dims(node.attr) is not None
    if isinstance(node, ast.Call) and node.args:
        raw = dotted(node.func)
        first = node.args[0]
        return bool(raw) and canonical_text(raw, ctx.imports) in ("os.environ.get", "os.getenv") \
            and isinstance(first, ast.Constant) and first.value in RANK_ENV_VARS
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
            and node.slice.value in RANK_ENV_VARS:
        return canonical_text(dotted(node.value), ctx.imports) in ("os.environ", "environ")
    return False


#: builtins whose result has as many elements as their first argument
_COUNT_KEEPING = frozenset({"enumerate", "reversed", "sorted"})


def unwrapped_iterable(node):
    """An iterable expression without the wrappers that keep its elements
    and their order: progress bars (``tqdm(xs, desc=...)``), ``list()``,
    ``tuple()``, ``iter()``."""
    while isinstance(node, ast.Call) and node.args and not isinstance(node.args[0], ast.Starred):
        name = dotted(node.func)
        last = name.rsplit(".", 1)[-1] if name else ""
        if last in PROGRESS_WRAPPERS or (last in ("list", "tuple", "iter") and len(node.args) == 1
                                         and not node.keywords):
            node = node.args[0]
            continue
        break
    return node


def same_elements(first, second) -> bool:
    """Whether two expressions yield the same elements in the same order
    (``tqdm(list(reversed(xs)))`` and ``reversed(xs)``)."""
    return unparse(unwrapped_iterable(first)) == unparse(unwrapped_iterable(second))


def _negative_or_zero(node) -> Optional[int]:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and type(node.operand.value) is int:
        return -node.operand.value
    if isinstance(node, ast.Constant) and type(node.value) is int and node.value <= 0:
        return node.value
    return None


def _rank_presence_operand(compare: ast.Compare):
    """The operand of a comparison that holds alike for every non-negative
    value (``x != -1``, ``x == -1``, ``x >= 0``, ``x < 0``, ``x > -1``) or
    tests it against None -- for a rank id, a test of whether there is one;
    None otherwise."""
    left, op, right = compare.left, compare.ops[0], compare.comparators[0]
    if isinstance(op, (ast.Is, ast.IsNot, ast.Eq, ast.NotEq)):
        if isinstance(right, ast.Constant) and right.value is None:
            return left
        if isinstance(left, ast.Constant) and left.value is None:
            return right
    bound = _negative_or_zero(right)
    operand = left
    if bound is None:
        bound = _negative_or_zero(left)
        operand = right
        op = {ast.Lt: ast.Gt(), ast.Gt: ast.Lt(), ast.LtE: ast.GtE(), ast.GtE: ast.LtE()}.get(type(op), op)
    if bound is None:
        return None
    kind = type(op)
    if kind in (ast.Eq, ast.NotEq) and bound < 0:
        return operand
    if kind in (ast.Lt, ast.GtE) and bound <= 0:
        return operand
    if kind in (ast.Gt, ast.LtE) and bound < 0:
        return operand
    return None


#: keywords that name the group (or mesh dimension) a rank getter answers
#: for: with only these, the answer is this process's own rank in it
def _picked(expr: ast.IfExp) -> str:
    """What the test of ``a if test else b`` decides of its value: which
    value comes out, hence its structure; only its contents where both are
    scalars of one type, literals or builtin conversions (``1 if rank <
    extras else 0``, ``int(FAILED) if drawn < p else int(poller.poll())``
    are a number either way)."""
    kind = scalar_kind(expr.body)
    if kind is not None and kind == scalar_kind(expr.orelse):
        return CONTENTS
    return WHOLE


def _placed(call: ast.Call, args: tuple, kwargs: tuple, arg_atoms: frozenset, imports: dict) -> tuple:
    """``(keyword arguments, what the arguments depend on)`` of a library
    call, with the device it is told to put its result on only held by the
    result (``torch.empty(n, device=dev)`` is made of ``n``, on ``dev``).  A
    rank's device places a value; what the value is, and its structure, are
    the same on every rank.  A torch tensor maker (:func:`made_tensor_call`)
    makes a tensor of the same shape on any device, whatever the device
    argument is: one a rank index picks from a list (``devices[local_rank]``)
    differs whole, and still only places the value
    (:data:`~cslint.analysis.atoms.PLACED`).  Any other call (a communicator
    built on the device) only holds it (:func:`hold`): a device that differs
    whole may still decide what the object is."""
    if not kwargs or not arg_atoms:
        return kwargs, arg_atoms
    for name, atoms in kwargs:
        if name in PLACEMENT_KEYWORDS and atoms:
            break
    else:
        return kwargs, arg_atoms
    if made_tensor_call(call, imports):
        kwargs = tuple((name, project(PLACED, atoms) if name in PLACEMENT_KEYWORDS else atoms) for name, atoms in kwargs)
    else:
        kwargs = tuple((name, hold(atoms) if name in PLACEMENT_KEYWORDS else atoms) for name, atoms in kwargs)
    out = EMPTY
    for atoms in args:
        out |= atoms
    for _, atoms in kwargs:
        out |= atoms
    return kwargs, out


def _held(evaluator, call: ast.Call, last: Optional[str], ref, args: tuple, kwargs: tuple, arg_atoms: frozenset,
          env) -> frozenset:
    """What a library call's result depends on among its arguments, where
    the result only holds them: ``module.to(device)``, ``t.cuda(local_rank)``
    (the value moved), and an object of a library class (``CamelCase``, by
    Python's naming convention, or a place: ``torch.device(f"cuda:{i}")``,
    vocabulary.PLACE_CLASSES), which holds what it was built with.  A rank
    or an offset given to its constructor is inside it, not what it is: it
    exists, has its type and answers its own questions alike on every rank.
    The arguments' structure (a list filled on some ranks only) still makes
    it differ, but for a process group (WHOLLY_HELD_CLASSES) and a place's
    index (:func:`_device_parts`)."""
    if not arg_atoms or last is None:
        return arg_atoms
    func = call.func
    if last in PLACEMENT_METHODS and type(func) is ast.Attribute:
        return hold(arg_atoms)
    if last in WHOLLY_HELD_NAMES and (ref is None or ref.tag == "qual"):
        canonical = canonical_text(dotted(func), evaluator.ctx.imports)
        if canonical in PLACE_CLASSES:
            kind, index = _device_parts(evaluator, call, args, kwargs, env)
            return kind | project(ELEMENTS_HELD, index)
        if canonical in WHOLLY_HELD_CLASSES:
            # all of it held: what a process group is made from decides neither that it is one nor its type
            return project(ELEMENTS_HELD, arg_atoms)
    if builds_library_object(last, ref):
        return hold(arg_atoms)
    return arg_atoms


def _device_parts(evaluator, call: ast.Call, args: tuple, kwargs: tuple, env) -> tuple:
    """``(what the device's kind is made from, what its index is made
    from)`` of ``torch.device(...)``.  The index (a second argument,
    ``index=``, what a text formats or adds after the colon that ends the
    kind, ``f"cuda:{local_rank}"``, ``f"{platform.name}:{index}"``, a
    question for this rank's own device as written,
    ``torch.device(torch.cuda.current_device())``) is all held: a device
    of that kind whatever number a rank picks.  Anything else names the
    kind (``torch.device("cpu" if rank == 0 else "cuda")``, ``type=``): kept
    as it is, so a test choosing the text makes the device's kind
    (``.type``, ``==``, ``str()``) differ.  With a spread, all is the kind."""
    if any(type(arg) is ast.Starred for arg in call.args) or any(kw.arg is None for kw in call.keywords):
        return EMPTY.union(*args, *[atoms for _, atoms in kwargs]), EMPTY
    kind = index = EMPTY
    for position, atoms in enumerate(args):
        if position > 0 or _index_getter(call.args[0], atoms):
            index |= atoms
            continue
        split = _split_at_colon(call.args[0])
        if split is None:
            kind |= atoms
        else:
            kind = kind.union(*[evaluator.eval(part, env) for part in split[0]])
            index = index.union(*[evaluator.eval(part, env) for part in split[1]])
    for name, atoms in kwargs:
        if name == "index":
            index |= atoms
        else:
            kind |= atoms
    return kind, index


def _index_getter(arg: ast.expr, atoms: frozenset) -> bool:
    """Whether a device's first argument is a question, as written, for
    this rank's own id or device (a call with no arguments that is a
    rank-id or device-id source): a number, an index of the default kind."""
    return type(arg) is ast.Call and not arg.args and not arg.keywords and bool(atoms) \
        and all(atom.tag == "S" and atom.whole is False and atom.kind in IDENTITY_KINDS for atom in atoms)


def _split_at_colon(text: ast.expr) -> Optional[tuple]:
    """``(the parts before, the parts after)`` the written colon that ends
    a device text's kind (``f"{kind}:{index}"``, ``kind + ":" + str(index)``),
    or None where no part written out holds one."""
    parts = []
    while type(text) is ast.BinOp and type(text.op) is ast.Add:
        parts.append(text.right)
        text = text.left
    parts.append(text)
    parts.reverse()
    if len(parts) == 1 and type(text) is ast.JoinedStr:
        parts = [value.value if type(value) is ast.FormattedValue else value for value in text.values]
    for position, part in enumerate(parts):
        if type(part) is ast.Constant and type(part.value) is str and ":" in part.value:
            return parts[:position], parts[position + 1:]
    return None


def may_resolve_in_tree(ref, ctx) -> bool:
    """Whether the whole-tree pass may resolve the call of another module's function ``ref`` (a
    ``QualRef``) to a function of the tree: a name in the file's own top-level package
    (:func:`~cslint.analysis.raises.of_own_package`), or any name where the file is in no package (its
    neighbours are top-level modules too).  A library's function never is; bound or spilt, its call
    reads its arguments as passed, so keeping them bound would only cost."""
    return _in_tree_package(ref.dotted, ctx)


def _in_tree_package(dotted: str, ctx) -> bool:
    """:func:`may_resolve_in_tree` of a canonical dotted name."""
    if "." not in ctx.module:
        return True
    head = tuple(dotted.split(".", 2)[:2])  # its first two names: all the answer reads
    memo = ctx.__dict__.setdefault("_own_heads", {})  # worked out once per file and head
    known = memo.get(head)
    if known is None:
        known = memo[head] = of_own_package(dotted, ctx)
    return known


def receiver_of_tree(ref, ctx) -> bool:
    """Whether a method called through a typed receiver or a field (``TypedMethodRef``,
    ``FieldMethodRef``) may be a method of a class of the tree, which the whole-tree pass resolves: the
    receiver's type names a class of this file or a name in the tree's package (:func:`_in_tree_package`),
    or the field is one some ``self.attr = C(...)`` of the file builds so (:func:`tree_built_fields`).
    Flattened inside a call past the nesting limit, such a call keeps its arguments bound, as a function
    of another module does: a helper object's method that gathers what it is handed hands back what it
    agreed, not the caller's own value (``self.adapter.sync(batch)``).  A field only ever holding a
    library object (``{}``, a queue) is not one: its method reads its arguments as passed either way."""
    tag = ref.tag
    if tag == "fieldmethod":
        return ref.attr in tree_built_fields(ctx)
    if tag != "typed":
        return False
    for term in ref.terms:
        if term[0] == "class" or (term[0] == "named" and _in_tree_package(term[1], ctx)):
            return True
    return False


def tree_built_fields(ctx) -> frozenset:
    """The fields some ``self.attr = C(...)`` of the file ``ctx`` sets to what calling a class of the
    file or a name in the tree's package makes (:func:`receiver_of_tree`); worked out once per file,
    from the field writes the imports walk kept."""
    found = ctx.__dict__.get("_tree_built_fields")
    if found is not None:
        return found
    fields = set()
    for attr, value in ctx.field_writes:
        if attr in fields or type(value) is not ast.Call:
            continue
        text = dotted(value.func)
        if not text or "()" in text:
            continue
        if text in ctx.module_classes:
            fields.add(attr)
        elif text.partition(".")[0] in ctx.imports and _in_tree_package(canonical_text(text, ctx.imports), ctx):
            fields.add(attr)
    found = ctx.__dict__["_tree_built_fields"] = frozenset(fields)
    return found
