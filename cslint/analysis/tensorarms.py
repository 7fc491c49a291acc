"""Both arms build a tensor: ``if root: buf = torch.cat(parts) else: buf = torch.empty(n)``.

Which arm of an ``if``/``else`` a rank takes decides what such a name holds
and how long it is, never its kind: past the ``if`` every rank holds a tensor
(a root its serialised payload, the others an empty buffer of the size it
announced).  The test reaches the name as a length made from values
(``atoms.SIZED``): a type test (``isinstance(buf, torch.Tensor)``, torch's
override check ``has_torch_function((buf,))``) forgives it, and every other
read of its structure (its length, whether it is None) reads it whole, as
before: what
:func:`evaluator._picked` does for ``a if test else b`` of one scalar type,
for statements that bind a name in each arm.  Not read inside a ``try``
(a failure in an arm reaches a handler with the name not bound yet) nor by
the summary walk of a function that reaches no collective.

A tensor here is what a torch function that makes a new tensor returns
(:data:`TENSOR_MAKERS`, called through the imported module), a name every
binding of which in the function is such a call (``full = torch.empty(...)``),
or a piece or view of one (``full[:, lo:hi]``, ``full.view(...)``).  Every
binding of the name inside the ``if`` must be one, and every path through
each arm must bind it (an arm ending in a nested ``if``/``else`` binding it on
both sides counts; an arm that may leave first does not)."""

from __future__ import annotations

import ast

from . import cfg as cfgmod
from .astwalk import holds_kind, param_names, plain_bindings, walked
from .astwalk import walk as fast_walk
from .scope import canonical_text
from .syntax import dotted
from .vocabulary import SIZE_ONLY_FACTORIES

#: torch functions whose result is a new tensor whatever they are given
TENSOR_MAKERS = SIZE_ONLY_FACTORIES | frozenset({
    "full", "tensor", "as_tensor", "cat", "concat", "stack", "arange", "randint", "empty_like", "zeros_like",
    "ones_like", "full_like", "rand_like", "randn_like", "empty_strided", "from_numpy"})
#: tensor methods whose result is a tensor again (a view, a copy, a piece)
TENSOR_VIEWS = frozenset({"view", "reshape", "contiguous", "clone", "narrow", "flatten", "unflatten", "permute",
                          "transpose", "squeeze", "unsqueeze", "detach", "to", "cpu", "cuda", "float", "half",
                          "bfloat16", "int", "long", "byte"})


def made_tensor_call(value: ast.expr, imports: dict) -> bool:
    """``torch.empty(n)``, ``torch.cat(parts)``: a call of a torch function
    that makes a new tensor, named through the module's imports."""
    if type(value) is not ast.Call:
        return False
    text = canonical_text(dotted(value.func), imports)
    if not text or not text.startswith("torch."):
        return False
    return text.count(".") == 1 and text[6:] in TENSOR_MAKERS


class TensorArms:
    """Per function: which two-armed ``if`` statements bind a name to a
    tensor on every path through both arms (asked by the dataflow of the
    decisions a binding depends on)."""

    __slots__ = ("_func", "_imports", "makes", "_nested", "_made", "_asked", "_guarded")

    def __init__(self, func: ast.AST, imports: dict, callee_names: frozenset, nested: bool):
        self._func, self._imports, self._nested = func, imports, nested
        # whether the function calls a tensor maker at all (the last names of its callees, from its own scan):
        # most do not, and then nothing here walks it
        self.makes = not TENSOR_MAKERS.isdisjoint(callee_names)
        self._made = None  # names every binding of which makes a tensor, worked out when first asked
        self._asked: dict = {}  # (id(if), name) -> answer
        self._guarded = None  # id() of the statements inside a ``try`` (a handler may be reached before the binding)

    def tensor_value(self, value: ast.expr) -> bool:
        """Whether ``value`` is a tensor by construction (see the module)."""
        if not self.makes:
            return False
        t = type(value)
        if t is ast.Call:
            func = value.func
            if type(func) is ast.Attribute and func.attr in TENSOR_VIEWS and self.tensor_value(func.value):
                return True
            return made_tensor_call(value, self._imports)
        if t is ast.Subscript:
            return self.tensor_value(value.value)
        if t is ast.Name:
            return value.id in self._made_names()
        return False

    def binds_tensor(self, stmt: ast.AST):
        """The name ``stmt`` binds when it is ``name = <tensor>``, else None."""
        if type(stmt) is not ast.Assign or len(stmt.targets) != 1 or type(stmt.targets[0]) is not ast.Name:
            return None
        return stmt.targets[0].id if self.tensor_value(stmt.value) else None

    def both_arms_bind(self, decision: ast.If, name: str) -> bool:
        """Whether every path through each arm of ``decision`` (which has an
        ``else``) binds ``name``, and every binding of it there is
        ``name = <tensor>``."""
        key = (id(decision), name)
        found = self._asked.get(key)
        if found is None:
            # the syntax of the arms' own statements first: most ifs bind no tensor there
            found = self._asked[key] = bool(decision.orelse) and type(self._func) in _FUNCTIONS \
                and self._every_path_binds(decision.body, name) and self._every_path_binds(decision.orelse, name) \
                and name not in param_names(self._func) and self._only_tensor_bindings(decision, name) \
                and id(decision) not in self._in_try()
        return found

    def _in_try(self) -> frozenset:
        """The ``if`` statements (their id()) inside a ``try`` of the function:
        a failure in an arm reaches a handler with the name not yet bound."""
        guarded = self._guarded
        if guarded is None:
            guarded = self._guarded = frozenset(
                id(node) for outer in walked(self._func) if type(outer) in _TRIES
                for node in walked(outer) if type(node) is ast.If)
        return guarded

    def _every_path_binds(self, stmts: list, name: str) -> bool:
        for stmt in stmts:
            t = type(stmt)
            if t is ast.Return or t is ast.Raise or t is ast.Break or t is ast.Continue:
                return False
            if self.binds_tensor(stmt) == name:
                return True
            if t is ast.If and stmt.orelse and self._every_path_binds(stmt.body, name) \
                    and self._every_path_binds(stmt.orelse, name):
                return True
            if t is not ast.If and t is not ast.Expr and t is not ast.Assign and t is not ast.AnnAssign:
                return False  # a loop, a try, a with: its paths are not followed
            if t is ast.If and _leaves(stmt):
                return False
        return False

    def _only_tensor_bindings(self, decision: ast.If, name: str) -> bool:
        stores = tensors = 0
        for node in fast_walk(decision):
            t = type(node)
            if t is ast.Name:
                if node.id == name and type(node.ctx) is not ast.Load:
                    stores += 1  # any binding: a loop's, an unpacking's, ``with ... as``, ``+=``
            elif t is ast.Assign:
                if self.binds_tensor(node) == name:
                    tensors += 1
            elif t in _SCOPES and node.name == name:
                return False
        return stores == tensors

    def _made_names(self) -> frozenset:
        made = self._made
        if made is None:
            # a nested function may rebind a name of this one (``nonlocal``): then none is read as made here
            made = self._made = frozenset() if self._nested else _names_made(self._func, self._imports)
        return made


def tensor_arms(dataflow) -> TensorArms:
    """The :class:`TensorArms` of ``dataflow``'s function, made when first asked."""
    arms = dataflow.tensor_index
    if arms is None:  # (asked of every binding and every way out of an arm: most functions make no tensor)
        info = dataflow.info
        arms = dataflow.tensor_index = TensorArms(info.func, info.ctx.imports, info.callee_names, bool(info.local_defs))
    return arms


def tensor_deciders(dataflow, n: int) -> tuple:
    """The decisions ``(d, label)`` node ``n`` of ``dataflow`` depends on
    where ``n`` is ``name = <tensor>`` and ``d`` an ``if``/``else`` both arms
    of which bind ``name`` to a tensor on every path: which arm ran decides
    what the name holds and its size, never its kind."""
    arms = tensor_arms(dataflow)
    node = dataflow.graph.nodes[n]
    stmt = node.stmt
    if not arms.makes or node.kind != cfgmod.STMT or type(stmt) is not ast.Assign or type(stmt.value) not in _MADE:
        return ()
    name = arms.binds_tensor(stmt)
    if name is None:
        return ()
    return tuple((d, label) for d, label in dataflow.deciders(n)
                 if (decision := dataflow.two_armed_if(d)) is not None and arms.both_arms_bind(decision, name))


#: the values a binding to a tensor may have (:meth:`TensorArms.tensor_value`): a quick test before asking it
_MADE = (ast.Call, ast.Subscript, ast.Name)


def _leaves(stmt: ast.AST) -> bool:
    """Whether a ``return``/``raise``/``break``/``continue`` lies anywhere in ``stmt``."""
    return holds_kind(stmt, _EXITS)


_EXITS = (ast.Return, ast.Raise, ast.Break, ast.Continue)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_TRIES = (ast.Try, getattr(ast, "TryStar", ast.Try))


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.ExceptHandler)


def _names_made(func: ast.AST, imports: dict) -> frozenset:
    """The local names every binding of which in ``func`` (its own scope) is
    a call making a tensor (:func:`made_tensor_call`)."""
    return frozenset(plain_bindings(func, lambda value: made_tensor_call(value, imports)))
