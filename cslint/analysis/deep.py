"""The in-depth facts of a function that can reach a collective: its CFG
dataflow under one mode assignment, then every call site that is or may lead
to a collective with the conditions guarding it, the fields it writes and
what it returns."""

from __future__ import annotations

import ast

from ..model import Span
from . import cfg as cfgmod
from .callfacts import collective_facts, wrapper_facts
from .dataflow import Dataflow
from .evaluator import Evaluator
from .feasibility import constant_arguments
from .guards import Guards
from .records import Site, Variant
from .syntax import unparse


def deep_variant(evaluator: Evaluator, fold, live=None, cases=()) -> tuple:
    """(the :class:`Variant` of one mode fold, the variables at the exit).
    ``live``: id(call) -> the indices of the parameter ``cases`` (value
    tuples) under which it can run (:meth:`Feasibility.live_calls`), or None."""
    flow = Dataflow(evaluator.info, evaluator, fold)
    return _collect(evaluator, flow, live, cases), flow.exit_env


def _collect(evaluator: Evaluator, flow: Dataflow, live=None, cases=()) -> Variant:
    info = evaluator.info
    variant = Variant()
    site_index_of_call: dict = {}
    pending = []
    for node in flow.graph.nodes:
        if node.id not in flow.live or node.stmt is None:
            continue
        env = flow.envs.get(node.id, {})
        for call_info in info.node_info(node).calls:
            call, match = call_info.call, call_info.match
            if id(call) in site_index_of_call:
                continue  # duplicated finally body: first (normal-path) copy wins
            ref = None if match else info.resolve_ref(call.func)
            if match is None and ref is None:
                continue
            when = None
            if live is not None:
                indices = live.get(id(call), frozenset())
                if not indices:
                    continue  # no assignment of the case parameters runs it
                if len(indices) < len(cases):
                    when = frozenset(cases[i] for i in indices)
            raw = call_info.raw
            args, kwargs = evaluator.args(call, env)
            site = Site(Span.of(call), raw or unparse(call.func), call_info.canonical or raw or "",
                        match.collective if match else None, ref, args, kwargs, ())
            site.fix = collective_facts(call, raw, match.spec, match.api, info.ctx.is_module_level) \
                if match else wrapper_facts(call)
            site.when = when
            site.consts, site.star = constant_arguments(call)
            if ref is not None:
                site.group_args = info.ctx.group_arguments(call)
            site_index_of_call[id(call)] = len(variant.sites)
            variant.sites.append(site)
            pending.append((site, node, call_info.inline, env, call))
        if node.kind == cfgmod.STMT:
            node_flow = flow.flow_at(node.id, env)
            flow.transfer.field_writes(node.stmt, node_flow, variant.fields, variant.field_types)
            if isinstance(node.stmt, ast.Return):
                atoms, parts = flow.transfer.returned(node.stmt, node_flow)
                variant.returns = variant.returns | atoms
                variant.add_return_parts(parts)
            elif isinstance(node.stmt, ast.Expr):
                variant.returns = variant.returns | flow.transfer.yielded(node.stmt, node_flow)
    guards = Guards(evaluator, flow, site_index_of_call)
    for site, node, inline, env, call in pending:
        site.ctx_atoms = flow.call_implicit(node.id, call)
        site.conds = guards.conds_of(site, node, inline, env)
    return variant

