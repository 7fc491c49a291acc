"""What an exception depends on, mixed into the evaluator (:class:`ExceptionReads`): the atoms an exception a
statement raises depends on (``raised_atoms``: an unknown callee may fail on one rank only, a builtin or a subscript
fails only where its operands differ, a call of an analysed function raises where the whole-tree pass says, atom
``E``), what an ``except ... as e`` binds (``caught_atoms``), and whether the handlers around a statement swallow only
failures every rank meets alike (``handled_exceptions_are_uniform``)."""

from __future__ import annotations

import ast

from .astwalk import walk as fast_walk
from .atoms import EMPTY, raised_by, source
from .converging import ends_alike_if_raised
from .raises import (
    awaits_tree_call, device_named, exception_names, fails_by_operands, host_tensor_method, own_classes_only,
    suppressing_handlers, tree_raised,
)
from .syntax import short, unparse
from .unfailing import cannot_raise
from .vocabulary import ALL_MODES_ALL_DIMS, LOCAL_FAILURE_WORDS, LOCAL_IO_CALLS, UNIFORM_EXCEPTIONS


class ExceptionReads:
    """Mixed into :class:`~cslint.analysis.evaluator.Evaluator`: reads ``self.info`` (the function), ``self.ctx`` (the
    module) and evaluates operands with ``self.eval``."""

    def handled_exceptions_are_uniform(self, stmt) -> bool:
        """Whether every handler that can swallow an exception of ``stmt``
        (those of the innermost ``try`` around it) catches only exceptions
        raised alike on every rank given the same inputs: a missing module
        (``ImportError``), a configuration error (``ValueError``,
        ``TypeError``, ``NotImplementedError``, an ``assert``), the end of an
        iterator (``StopIteration``).  What fails on one rank only (its disk,
        its memory, its network peers: ``OSError``, ``MemoryError``,
        ``RuntimeError``) or anything (``Exception``, a bare ``except``) is
        not."""
        try_stmt = self.info.enclosing_try(stmt)
        suppressing = self._suppressing_inside(stmt, try_stmt)
        if suppressing:
            # the innermost handler is a ``with contextlib.suppress(E):`` (``except E: pass``)
            return all(names and all(name in UNIFORM_EXCEPTIONS for name in names)
                       for names in (exception_names(handler.type) for handler in suppressing))
        if try_stmt is None or not any(self.info.inside(stmt, part) for part in try_stmt.body):
            return False
        handlers = [h for h in try_stmt.handlers if not _always_reraises(h.body)]
        if not handlers:
            return False
        for handler in handlers:
            names = exception_names(handler.type)
            if names and all(name in UNIFORM_EXCEPTIONS for name in names):
                continue
            if not _keeps_only_a_uniform_message(handler, self.ctx):
                return False
        return True

    def _suppressing_inside(self, stmt, try_stmt) -> list:
        """The handlers of the innermost ``with contextlib.suppress(E):`` around ``stmt`` inside ``try_stmt``
        (the innermost ``try`` around it; the function where None), empty where there is none."""
        info = self.info
        if not info.ctx.caller_catches.suppressors:
            return []
        parent = info.parents.get(id(stmt))
        while parent is not None and parent is not try_stmt and parent is not info.func:
            kind = type(parent)
            if kind is ast.With or kind is ast.AsyncWith:
                handlers = suppressing_handlers(info, parent)
                if handlers:
                    return handlers
            parent = info.parents.get(id(parent))
        return []

    def caught_atoms(self, handler: ast.ExceptHandler) -> frozenset:
        """What the exception bound by ``except ... as e`` depends on: any
        local failure for handlers that catch those; nothing rank-specific
        for exceptions raised alike everywhere."""
        names = exception_names(handler.type)
        if names and all(name in UNIFORM_EXCEPTIONS for name in names):
            return EMPTY
        return frozenset({source("exception from local work", "caught exception", self.ctx.path, handler.lineno,
                                 ALL_MODES_ALL_DIMS)})

    def raised_atoms(self, node, env=None) -> frozenset:
        """What an exception raised by this statement depends on: an unknown
        callee (library code, I/O) may raise on one rank only; a builtin such
        as ``int()`` or a subscript raises only if its operands differ; a call
        to an analysed function raises only if that function contains a
        ``raise`` (decided by the whole-tree pass, atom ``E``)."""
        env = env or {}
        stmt = node.stmt
        if stmt is None or isinstance(stmt, (ast.Raise, ast.Assert)) or ends_alike_if_raised(self.info, stmt):
            return EMPTY  # explicit raises are steered by their own conditions; raising or not, one constant returned
        info = self.info
        ctx = self.ctx
        text = short(unparse(stmt).split("\n")[0])
        line = getattr(stmt, "lineno", 0)
        local = frozenset({source("exception from local work", text, ctx.path, line, ALL_MODES_ALL_DIMS)})
        node_info = info.node_info(node)
        if own_classes_only(info, stmt):
            return tree_raised(info, node_info.calls, local, line, text, stmt)  # only the tree's own raises reach it
        same_everywhere = self.handled_exceptions_are_uniform(stmt)
        atoms = set()
        for call in [call for call in node_info.calls if not cannot_raise(call.call, stmt, info)]:
            if call.match is not None:
                if call.match.spec is not None and call.match.spec.local_work and not same_everywhere:
                    return local
                continue
            raw = call.raw
            if same_everywhere or fails_by_operands(call, info, ctx):
                # what raises depends on the operands (and on what a local
                # read brings in): the same operands fail alike everywhere
                if same_everywhere and raw and raw.rsplit(".", 1)[-1] in LOCAL_IO_CALLS:
                    return local
                operands = [arg.value if isinstance(arg, ast.Starred) else arg for arg in call.call.args]
                operands += [kw.value for kw in call.call.keywords]
                if isinstance(call.call.func, ast.Attribute) and (same_everywhere or host_tensor_method(call, info)):
                    operands.append(call.call.func.value)  # the receiver is an operand too
                for operand in operands:  # (a device this rank was given is there: raises.device_named)
                    atoms |= {atom for atom in self.eval(operand, env) if not device_named(atom)}
                continue
            ref = info.resolve_ref(call.call.func)
            if ref is None:
                return local
            atoms.add(raised_by(ref, ctx.path, line, text))
        for expr in node_info.exprs:
            for sub in fast_walk(expr):
                if isinstance(sub, ast.Await) and not same_everywhere and not awaits_tree_call(sub, info):
                    return local
                if isinstance(sub, ast.Subscript) and isinstance(sub.ctx, ast.Load):
                    atoms |= self.eval(sub.value, env) | self.eval(sub.slice, env)
        # operands that may differ make the exception (and the path) differ
        return frozenset(atoms)


def _keeps_only_a_uniform_message(handler: ast.ExceptHandler, ctx) -> bool:
    """Whether a handler re-raises every exception but one whose message
    holds a known text, and that text names no failure of one rank's own
    memory, disk or peers (``if SPLIT_UNSUPPORTED not in str(e): raise``
    keeps a property of the installed backend; ``if "out of memory" in
    str(e): ... else: raise`` keeps a local out-of-memory error)."""
    kept = _message_kept(handler)
    if kept is None:
        return False
    text = kept.value if isinstance(kept, ast.Constant) else None
    if isinstance(kept, ast.Name):
        text = _module_string(ctx, kept.id)
    if not isinstance(text, str) or not text:
        return False
    lowered = text.lower()
    return not any(word in lowered for word in LOCAL_FAILURE_WORDS)


def _module_string(ctx, name: str):
    """The string a module-level constant of this file is assigned once."""
    strings = ctx.__dict__.get("_module_strings")
    if strings is None:
        strings = {}
        counts: dict = {}
        for node in ctx.tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                target = node.targets[0].id
                counts[target] = counts.get(target, 0) + 1
                if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                    strings[target] = node.value.value
        strings = {k: v for k, v in strings.items() if counts.get(k) == 1}
        ctx.__dict__["_module_strings"] = strings
    return strings.get(name)


def _always_reraises(body: list) -> bool:
    return bool(body) and isinstance(body[-1], ast.Raise)


def _message_kept(handler: ast.ExceptHandler):
    """The text a handler keeps an exception for when it re-raises every
    other one: ``if TEXT not in str(e): raise`` first, or ``if TEXT in
    str(e): ... else: raise``; None for any other handler."""
    if not handler.name or not handler.body or not isinstance(handler.body[0], ast.If):
        return None
    test = handler.body[0]
    compare = test.test
    if not (isinstance(compare, ast.Compare) and len(compare.ops) == 1 and len(compare.comparators) == 1):
        return None
    haystack = compare.comparators[0]
    if not (isinstance(haystack, ast.Call) and isinstance(haystack.func, ast.Name) and haystack.func.id == "str"
            and len(haystack.args) == 1 and isinstance(haystack.args[0], ast.Name)
            and haystack.args[0].id == handler.name):
        return None
    if isinstance(compare.ops[0], ast.NotIn) and _always_reraises(test.body):
        return compare.left
    if isinstance(compare.ops[0], ast.In) and _always_reraises(test.orelse):
        return compare.left
    return None
