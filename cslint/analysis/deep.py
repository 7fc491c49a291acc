"""The in-depth facts of a function that can reach a collective: its CFG
dataflow under one mode assignment, then every call site that is or may lead
to a collective with the conditions guarding it, the fields it writes and
what it returns."""

from __future__ import annotations

import ast
from typing import Optional

from ..model import Span
from . import cfg as cfgmod
from .callfacts import collective_facts, wrapper_facts
from .collectivegroups import group_argument_node, issuing_route, method_receiver
from .communicators import assigned_fields
from .dataflow import Dataflow
from .evaluator import Evaluator
from .feasibility import constant_arguments, forwarded_case_parameters
from .function import imported_text
from .escapes import statement_escapes
from .exits import raises_exit
from .guards import Guards
from .jobkills import exceptions_hang
from .atoms import EMPTY, raised_by
from .callrefs import field_method_ref
from .positions import own_arguments
from .presentreturns import add_returned
from .raises import computes_from_operands, may_raise_own_class, raised_tree_by, reads_host_tensor, swallowed_here
from .recorded import assert_holds_where_reached
from .records import Site, Variant
from .settled import settled_call_implicit, settled_flow
from .syntax import CONTEXT_METHODS, unparse
from .astwalk import holds_kind, walk as fast_walk
from .localgroups import call_group_arguments
from .memosyntax import memo_fill_calls
from .neighbours import neighbour_exchange
from .pairpayload import agreed_structure

_CALLS = frozenset({ast.Call})


def called_field(info, func):
    """``self.attr`` called, where ``attr`` is a field some ``self.attr =
    ...`` of the file assigns and the class defines no method ``attr``: a
    reference to ``__call__`` of what the field holds (the whole-tree pass
    decides by its classes whether the call's name says it is a collective,
    :func:`~cslint.analysis.resolution.issued_collective`); else None."""
    if type(func) is not ast.Attribute or type(func.value) is not ast.Name or not info.self_name \
            or func.value.id != info.self_name or not info.class_key:
        return None
    ctx = info.ctx
    if func.attr not in assigned_fields(ctx):
        return None
    if f"{info.class_key.partition(':')[2]}.{func.attr}" in ctx.definitions():
        return None
    return field_method_ref(info.class_key, func.attr, "__call__")


def deep_variant(evaluator: Evaluator, fold, live=None, cases=(), case_params=()) -> tuple:
    """(the :class:`Variant` of one mode fold, the variables at the exit).
    ``live``: id(call) -> the indices of the parameter ``cases`` (value
    tuples of ``case_params``) under which it can run
    (:meth:`Feasibility.live_calls`), or None."""
    flow = Dataflow(evaluator.info, evaluator, fold)
    return _collect(evaluator, flow, live, cases, case_params), flow.exit_env


def _collect(evaluator: Evaluator, flow: Dataflow, live=None, cases=(), case_params=()) -> Variant:
    info = evaluator.info
    variant = Variant(raised=EMPTY, raised_tree=EMPTY)
    site_index_of_call: dict = {}
    pair_exchanges = info.ctx.knowledge.pair_exchanges
    pending = []
    fills = None  # id(call) -> the global it fills (memofills.py), worked out at the first collective assigned
    for node in flow.graph.nodes:
        if node.id not in flow.live or node.stmt is None:
            continue
        env = flow.envs.get(node.id, {})
        calls = info.node_info(node).calls
        if node.kind == cfgmod.STMT and (type(node.stmt) is ast.With or type(node.stmt) is ast.AsyncWith):
            calls = calls + info.context_calls(node)  # ``with X(...):`` runs X.__enter__, X.__exit__ (managed.py)
        for call_info in calls:
            call, match = call_info.call, call_info.match
            if id(call) in site_index_of_call:
                continue  # duplicated finally body: first (normal-path) copy wins
            ref = called_field(info, call.func) if match else info.resolve_ref(call.func)
            if match is None and ref is None:
                continue
            when = None
            if live is not None:
                # a context method runs where the item's constructor call does
                made = call.func.value if call_info.raw is None and type(call.func) is ast.Attribute \
                    and type(call.func.value) is ast.Call and call.func.attr in CONTEXT_METHODS else call
                indices = live.get(id(made), frozenset())
                if not indices:
                    continue  # no assignment of the case parameters runs it
                if len(indices) < len(cases):
                    when = frozenset(cases[i] for i in indices)
            raw = call_info.raw
            args, kwargs = evaluator.args(call, env)
            if ref is not None:
                owned = own_arguments(evaluator, call, args, env)
                if owned:
                    kwargs = kwargs + owned  # what the callee's parameter own parts read
            site = Site(Span.of(call), raw or unparse(call.func), match.collective if match else None, ref, args,
                        kwargs, ())
            site.fix = collective_facts(call, raw, match.spec, match.api, info.ctx.is_module_level) \
                if match else wrapper_facts(call)
            if match is not None:
                site.route = issuing_route(info.func, call, match.spec, lambda text: imported_text(info, text))
            site.when = when
            if match is not None and info.declared_globals and type(node.stmt) is ast.Assign \
                    and node.stmt.value is call:
                if fills is None:
                    fills = memo_fill_calls(info.func, info.declared_globals)
                site.memo_global = fills.get(id(call), "")
            site.consts, site.star = constant_arguments(call)
            if case_params and ref is not None:
                site.forwarded = forwarded_case_parameters(call, case_params)
            if ref is not None and ref.tag == "method":
                site.set_before = fields_set_before(info, flow.graph, node, call)
                site.handed = flow.fields.handed_at(ref.name, env)
            if ref is not None:
                site.group_args = call_group_arguments(info, call)
            exchange = pair_exchanges.get(call_info.canonical) if pair_exchanges and call_info.canonical else None
            if exchange is not None:
                site.neighbour = neighbour_exchange(info, call, node.stmt, exchange)
                site.agreed_structure = agreed_structure(info.ctx, call, pair_exchanges)
            site_index_of_call[id(call)] = len(variant.sites)
            variant.sites.append(site)
            pending.append((site, node, call_info.inline, env, call,
                            _group_handle(call, match.spec) if match is not None else None))
        if node.kind == cfgmod.STMT:
            node_flow = settled_flow(flow, node.id, env)
            flow.transfer.field_writes(node.stmt, node_flow, variant.fields, variant.field_types)
            if isinstance(node.stmt, ast.Return):
                add_returned(variant, evaluator, node.stmt, node_flow.env, flow.transfer.returned(node.stmt, node_flow),
                             flow.transfer.returned_none(node.stmt, node_flow))
            elif isinstance(node.stmt, ast.Expr):
                variant.add_return(flow.transfer.yielded(node.stmt, node_flow))
        elif node.kind == cfgmod.ASSERT and not swallowed_here(info, node.stmt) \
                and not assert_holds_where_reached(info, node.stmt):
            variant.raised = variant.raised | flow.implicit(node.id) | evaluator.truth(node.stmt.test, env)
    raised, variant.raised_tree = _raised(evaluator, flow)
    variant.raised = variant.raised | raised
    if exceptions_hang(info):  # (as the summary walk: not a method only a job-killing ``try`` runs)
        variant.escapes = _escaped(evaluator, flow)
    variant.tail = _tail(evaluator, flow, site_index_of_call)
    guards = Guards(evaluator, flow, site_index_of_call)
    for site, node, inline, env, call, group_argument in pending:
        site.ctx_atoms = settled_call_implicit(flow, node.id, call)
        site.conds = guards.conds_of(site, node, inline, env, group_argument)
    return variant


def _group_handle(call: ast.Call, spec) -> Optional[ast.expr]:
    """The expression that names the group a collective ``call`` runs over
    (read by :meth:`~cslint.analysis.guards.Guards.conds_of` for what chose
    it): the argument it is handed its group by, else the receiver of a
    method collective over no fixed group (``comm.all_reduce(x)``, a spec
    ``*.name``), whose communicator is its group: a rank holding another
    receiver waits in another communicator."""
    argument = group_argument_node(call, spec)
    return argument if argument is not None else method_receiver(call, spec)


def _tail(evaluator: Evaluator, flow: Dataflow, index: dict):
    """``Variant.tail``: where the function's last statement returns (or is)
    one call, its site indices and what decides that it raises."""
    body = evaluator.info.func.body
    last = body[-1] if type(body) is list and body else None
    if type(last) not in (ast.Return, ast.Expr) or type(last.value) is not ast.Call:
        return None
    node = flow.graph.node_of(last)
    if node is None or node not in flow.live:
        return None
    sites = tuple(sorted(index[id(call)] for call in fast_walk(last) if type(call) is ast.Call and id(call) in index))
    return sites, evaluator.raised_atoms(flow.graph.nodes[node], flow.envs.get(node, {}))


#: how many statements back :func:`fields_set_before` looks
MAX_SET_BEFORE = 8


def fields_set_before(info, graph, node, call: ast.Call) -> tuple:
    """The fields of ``self`` the statements right before the statement of
    ``call`` set, on the only path to it, with nothing called between the
    assignment and the call: ``((attr, line), ...)``, nearest first
    (``self._fatal = RuntimeError(msg); self.stopping = True;
    self._handle(msg, aligned=True)``).  The called method reads what they
    hold as the caller left it (:mod:`cslint.analysis.contexts`); the call
    must be the statement's only one, so nothing runs between."""
    stmt = node.stmt
    if type(stmt) not in (ast.Expr, ast.Assign) or stmt.value is not call or node.kind != cfgmod.STMT:
        return ()
    if any(holds_kind(arg, _CALLS) for arg in call.args) or any(holds_kind(kw.value, _CALLS) for kw in call.keywords):
        return ()
    out = []
    current = node
    for _step in range(MAX_SET_BEFORE):
        if len(current.preds) != 1:
            break
        before = graph.nodes[current.preds[0]]
        assign = before.stmt
        if before.kind != cfgmod.STMT or type(assign) is not ast.Assign or len(assign.targets) != 1:
            break
        attr = info.self_attr(assign.targets[0])
        if attr is None:
            break
        out.append((attr, assign.lineno))
        if holds_kind(assign.value, _CALLS):
            break  # what it calls runs before the fields set after it, and may set those set before
        current = before
    return tuple(out)


def _raised(evaluator: Evaluator, flow: Dataflow) -> tuple:
    """What decides that the function raises, as the summary walk says: the
    decisions above each ``raise`` (in a handler, also where what it caught
    came from).  The graph keeps no edge into an ``if`` arm that can only
    raise outside a handler (a crash, not a path), so such a ``raise`` is
    decided by the nearest ``if`` the graph runs -- its own deciders and its
    test -- and the tests of the arms in between, read where it runs.  What
    a call of the tree raises outside any ``try`` that may catch it passes
    on as that callee's own raises (a callee that fails on one rank makes
    its caller fail there too).  What runs only where a group has one rank
    (``if size > 1: broadcast(...) else: <here>``) raises alike within it,
    as it carries nothing else that differs (:meth:`Dataflow.single_rank`).
    Beside it, what decides that it raises an exception of a class the tree
    defines (``Variant.raised_tree``, raises.py): a builtin exception's
    ``raise`` is left out, a call passes on its callee's own such raises."""
    info = evaluator.info
    graph, parents, func = flow.graph, info.parents, info.func
    raised = tree = EMPTY
    for node in graph.nodes:
        stmt = node.stmt
        if type(stmt) is not ast.Raise:
            if node.kind == cfgmod.STMT and node.id in flow.live and stmt is not None \
                    and not flow.single_rank(node.id) and not _may_be_caught(info, stmt):
                passed = _passed_on(info, node)
                if passed:
                    raised = raised | passed
                    tree = tree | {raised_tree_by(a.ref, a.path, a.line, a.text) for a in passed}
            continue
        if swallowed_here(info, stmt):
            continue  # its own handler takes it
        own = stmt.exc is None or may_raise_own_class(stmt)
        if node.id in flow.live:
            if flow.single_rank(node.id):
                continue
            raised = raised | flow.implicit(node.id)
            if own:
                tree = tree | flow.implicit(node.id)
            continue
        tests = []
        parent = parents.get(id(stmt))
        while parent is not None and parent is not func:
            if type(parent) is ast.If:
                test_node = graph.node_of(parent)
                if test_node is not None and test_node in flow.live:
                    env = flow.envs.get(test_node, {})
                    deciding = flow.implicit(test_node) | flow.cond_atoms(test_node)
                    for test in tests:
                        deciding = deciding | evaluator.truth(test, env)
                    raised = raised | deciding
                    if own:
                        tree = tree | deciding
                    break
                tests.append(parent.test)
            parent = parents.get(id(parent))
    return raised, tree


def _escaped(evaluator: Evaluator, flow: Dataflow) -> frozenset:
    """What decides that the function fails on this rank with an error it
    does not catch (``unhandled-exceptions = "hang"``), as the summary walk
    says for a summarised one (``Variant.escapes``): the decisions above
    each statement doing local work, each ``raise`` of an error and each
    failing ``assert`` outside any ``try``, and for a call of a function of
    the file that can fail, that callee's own (escapes.py).  A caller reads
    it where it calls the function (``guards.Guards.callee_escapes``), so a
    failure deep down a chain of functions that reach collectives leaves
    the rank it happens on while its peers go on to the caller's next
    collective."""
    info = evaluator.info
    ctx = info.ctx
    out = EMPTY
    for node in flow.graph.nodes:
        stmt = node.stmt
        if node.id not in flow.live or stmt is None or info.enclosing_try(stmt) is not None:
            continue  # what fails inside a ``try`` may be handled: escapes.py looks no further
        if node.kind == cfgmod.ASSERT:
            if not assert_holds_where_reached(info, stmt):
                out = out | flow.implicit(node.id) | evaluator.truth(stmt.test, flow.envs.get(node.id, {}))
        elif node.kind != cfgmod.STMT or isinstance(stmt, cfgmod.COMPOUND_STATEMENTS):
            continue
        elif type(stmt) is ast.Raise:
            if stmt.exc is not None and not raises_exit(stmt, ctx.exit_exceptions):
                out = out | flow.implicit(node.id)
        else:
            out = out | statement_escapes(info, stmt, flow.implicit(node.id))
    return out


def _may_be_caught(info, stmt) -> bool:
    """Whether ``stmt`` is in the body of a ``try`` of the function that has handlers."""
    child, parent = stmt, info.parents.get(id(stmt))
    while parent is not None:
        if (isinstance(parent, ast.Try) or type(parent).__name__ == "TryStar") and parent.handlers \
                and any(child is inner for inner in parent.body):
            return True
        child, parent = parent, info.parents.get(id(parent))
    return False


def _passed_on(info, node) -> frozenset:
    """What decides that the calls of the tree made by ``node`` raise (atom ``E``);
    a library call that computes from its operands alone, or a method of a
    tensor made on the host or a tensor made like one, fails alike on every
    rank."""
    out = EMPTY
    for call_info in info.node_info(node).calls:
        if call_info.match is not None or computes_from_operands(call_info) \
                or reads_host_tensor(call_info, info):
            continue
        call = call_info.call
        ref = info.resolve_ref(call.func)
        if ref is not None:
            out = out | {raised_by(ref, info.ctx.path, call.lineno, call_info.raw or "call")}
    return out
