"""The in-depth facts of a function that can reach a collective: its CFG
dataflow under one mode assignment, then every call site that is or may lead
to a collective with the conditions guarding it, the fields it writes and
what it returns."""

from __future__ import annotations

import ast

from ..model import Span
from . import cfg as cfgmod
from .atoms import EMPTY, qual_ref
from .callfacts import collective_facts, wrapper_facts
from .dataflow import Dataflow
from .evaluator import Evaluator
from .guards import Guards
from .records import FieldType, FieldWrite, Site, Variant
from .scope import canonical_text
from .syntax import flatten_targets, unparse
from .vocabulary import MUTATORS


def deep_variant(evaluator: Evaluator, fold) -> tuple:
    """(the :class:`Variant` of one mode fold, the variables at the exit)."""
    flow = Dataflow(evaluator.info, evaluator, fold)
    return _collect(evaluator, flow), flow.exit_env


def _collect(evaluator: Evaluator, flow: Dataflow) -> Variant:
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
            raw = call_info.raw
            args, kwargs = evaluator.args(call, env)
            site = Site(Span.of(call), raw or unparse(call.func), call_info.canonical or raw or "",
                        match.collective if match else None, ref, args, kwargs, ())
            site.fix = collective_facts(call, raw, match.spec, match.api, info.ctx.is_module_level) \
                if match else wrapper_facts(call)
            site_index_of_call[id(call)] = len(variant.sites)
            variant.sites.append(site)
            pending.append((site, node, call_info.inline, env))
        _field_writes(evaluator, flow, node, env, variant)
        if isinstance(node.stmt, ast.Return) and node.kind == cfgmod.STMT and node.stmt.value is not None \
                and not flow.single_rank(node.id):
            variant.returns = variant.returns | evaluator.eval(node.stmt.value, env) | flow.implicit(node.id)
    guards = Guards(evaluator, flow, site_index_of_call)
    for site, node, inline, env in pending:
        site.ctx_atoms = flow.implicit(node.id)
        site.conds = guards.conds_of(site, node, inline, env)
    return variant


def _field_writes(evaluator: Evaluator, flow: Dataflow, node, env, variant) -> None:
    info = evaluator.info
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
            for sub in flatten_targets(target):
                attr = info.self_attr(sub)
                base_attr = None
                if attr is None and isinstance(sub, ast.Subscript):
                    base_attr = info.self_attr(sub.value)
                if attr is None and base_attr is None:
                    continue
                if atoms is None:
                    atoms = evaluator.eval(value, env) | flow.implicit(node.id)
                extra = evaluator.eval(sub.slice, env) if base_attr else EMPTY
                variant.fields.append(FieldWrite(info.class_key, attr or base_attr, atoms | extra, s.lineno))
                if attr and isinstance(value, ast.Call):
                    ref = info.resolve_ref(value.func)
                    if ref is not None:
                        variant.field_types.append(FieldType(info.class_key, attr, ref))
                if attr and isinstance(value, ast.Name) and value.id in info.annotations:
                    variant.field_types.append(FieldType(
                        info.class_key, attr, qual_ref(canonical_text(info.annotations[value.id], info.ctx.imports))))
    elif isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
        call = s.value
        if isinstance(call.func, ast.Attribute) and call.func.attr in MUTATORS:
            attr = info.self_attr(call.func.value)
            if attr is not None:
                atoms = flow.implicit(node.id)
                for arg in call.args:
                    atoms |= evaluator.eval(arg, env)
                variant.fields.append(FieldWrite(info.class_key, attr, atoms, s.lineno))
