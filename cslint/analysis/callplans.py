"""What a call's text and place alone decide about its result, worked out
once per call node (:func:`plan_call`): a fixed result (a rank getter, a
configured or named source, a collective's per-rank result), what its
arguments hold (a seeded generator, a copy, a partial application), its first
argument (a progress bar), a uniform collective over a group, or an open call
the evaluator reads from its receiver, arguments and reference
(:meth:`~cslint.analysis.evaluator.Evaluator._eval_call`).
"""

from __future__ import annotations

import ast
from typing import Optional

from ..presets import KIND_FILESYSTEM, KIND_RANK_ID
from .atoms import CONTENTS, EMPTY, source
from .funcaliases import probed_text
from .scope import canonical_text
from .syntax import dotted, unparse
from .vocabulary import (
    ALL_MODES_ALL_DIMS, COPIES_WITH_CHANGES, PARTIAL_APPLICATIONS, PROGRESS_WRAPPERS, RANK_ENV_VARS, SEEDED_GENERATORS,
    TORCH_DISTRIBUTED_RECEIVERS,
)
from .localgroups import local_group
from .packagefiles import in_kernel_view
from .wrappers import WRAPPED_FORWARD, match_call

#: what a call's text decides about its result (:func:`plan_call`)
OPEN = "open"  # evaluated from its receiver, arguments and reference
FIXED = "fixed"  # the same whatever the variables hold
ARGUMENTS = "arguments"  # what its arguments hold
FIRST_ARGUMENT = "first argument"  # what its first argument holds
COLLECTIVE = "collective"  # uniform over a group: what each rank contributes


def plan_call(evaluator, call: ast.Call) -> tuple:
    """What a call's text and place alone decide about its result, worked out once per call (the summary
    walk, each pass of the dataflow and the guards evaluate the same calls): a fixed result, its arguments
    (seen through a transform, if one is given), its first argument, a uniform collective ``(group, spec)``,
    or :data:`OPEN` with what evaluating it needs (the builtin it names, its last name, its text)."""
    ctx = evaluator.ctx
    info = evaluator.info
    raw = dotted(call.func)
    if raw is not None:
        canon = canonical_text(raw, ctx.imports)
        norm = info.normalise_self(raw)
        if (match := match_call(info, call, raw, canon)) is None and (probed := probed_text(info, call.func)):
            raw, canon, norm = probed, canonical_text(probed, ctx.imports), probed  # a feature probe's function
        if match is not None:
            spec = match.spec
            if spec is None or spec.result == "uniform":
                return (COLLECTIVE, match.group, spec)
            kind = "this rank's output of a data-parallel module" if spec is WRAPPED_FORWARD \
                else "per-rank result of a collective"
            # an ``object`` result exists on every rank alike, and a ``shard``
            # (a reduce-scatter's part) has one shape on every rank: only what
            # it holds is this rank's own
            return (FIXED, frozenset({source(kind, raw, ctx.path, call.lineno, (("*", ctx.knowledge.world.span(match.group)),),
                                              whole=False if spec.result in ("object", "shard") else None)}))
        configured, named_source, by_name = ctx.call_text_verdicts(raw, canon, norm)
        if configured is not None:
            return (FIXED, EMPTY if configured == "uniform" else frozenset(
                {source("rank-local (configured)", raw, ctx.path, call.lineno, ALL_MODES_ALL_DIMS)}))
        if raw.rsplit(".", 1)[-1] in SEEDED_GENERATORS and (call.args or call.keywords):
            return (ARGUMENTS,)  # a generator seeded alike on every rank draws alike
        if raw.rsplit(".", 1)[-1] in ctx.knowledge.rendezvous or (canon in COPIES_WITH_CHANGES and call.args) \
                or canon in PARTIAL_APPLICATIONS:
            # a group met alike, a copy, a partial application: a rank's rank, socket, field or
            # bound argument is no structure of it
            return (ARGUMENTS, CONTENTS)
        if raw.rsplit(".", 1)[-1] in PROGRESS_WRAPPERS and call.args:
            return (FIRST_ARGUMENT,)  # a progress bar yields what it wraps; the rest is display
        if named_source is not None:
            kind, dims = named_source
            if kind == KIND_FILESYSTEM and call.args and (ctx.in_package(call.args[0], info.func)
                                                          or in_kernel_view(canon, call.args[0])
                                                          or ctx.read_configuration(call, info.func, info.self_name)):
                # a file of the package itself or whether the kernel shows a path (packagefiles.py), or
                # a configuration file the job was handed (configfiles.py): there alike on every rank
                # given the same name
                return (ARGUMENTS,)
            if kind == KIND_RANK_ID:
                if _asks_for_another_rank(call):
                    return (ARGUMENTS,)
                dims = _rank_in_group(call, raw, ctx, info) or dims
            return (FIXED, frozenset({source(kind, raw + "()", ctx.path, call.lineno, dims)}))
        env_source = _env_rank(call, canon, ctx.path)
        if env_source is not None:
            return (FIXED, env_source)
        if by_name is not None:
            if by_name == "uniform":
                return (FIXED, EMPTY)
            if _asks_for_another_rank(call):
                return (ARGUMENTS,)
            return (FIXED, frozenset({source(KIND_RANK_ID, raw + "()", ctx.path, call.lineno,
                                              _rank_in_group(call, raw, ctx, info) or by_name)}))
    func = call.func
    builtin = func.id if type(func) is ast.Name and evaluator._is_builtin(func.id) else None
    last = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else None
    return (OPEN, builtin, last, raw)

def _rank_in_group(call: ast.Call, raw: str, ctx, info=None) -> Optional[tuple]:
    """A rank asked of one group: ``get_rank(group=get_pp_group().cpu_group)``,
    ``pp_group.rank()``: it differs only along the dimensions of that
    group (``None`` when no group with known dimensions is named).  A local
    every binding of which names one group (``process_group =
    self.real_dp_process_group[i]; get_rank(group=process_group)``) names
    that group (:func:`localgroups.local_group`)."""
    group_text = next((unparse(kw.value) for kw in call.keywords if kw.arg in ("group", "process_group")), None)
    if group_text is None and "." in raw and raw.rsplit(".", 1)[-1] in ("rank", "Get_rank", "get_rank"):
        receiver = raw.rsplit(".", 1)[0]
        if receiver not in TORCH_DISTRIBUTED_RECEIVERS:
            group_text = receiver
    if not group_text:
        return None
    group = ctx.group_word(group_text)  # (the module's world names its groups)
    if group is None and info is not None and group_text.isidentifier():
        group = local_group(info, group_text)
    if group is None or group == "world":
        return None
    return (("*", ctx.knowledge.world.span(group)),)

def _env_rank(call: ast.Call, canon: Optional[str], path: str):
    if canon in ("os.environ.get", "os.getenv", "os.environ.__getitem__") and call.args:
        first = call.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value in RANK_ENV_VARS:
            return frozenset({source(KIND_RANK_ID, f"environment variable {first.value}", path,
                                     call.lineno, ALL_MODES_ALL_DIMS)})
    return None


_OWN_RANK_KEYWORDS = frozenset({"group", "process_group", "pg", "comm", "mesh_dim", "dim", "device_mesh"})


def _asks_for_another_rank(call: ast.Call) -> bool:
    """Whether a rank getter is asked for the rank of given coordinates or
    of a given index rather than this process's own: ``get_global_rank(group,
    i)``, ``get_group_rank(group, global_rank)``, ``topo.get_rank(pipe=s,
    data=d)`` translate through a table every rank holds alike; ``get_rank()``,
    ``get_rank(group)``, ``get_rank(group=g)`` answer for this process."""
    if len(call.args) >= 2:
        return True
    # ``**coords`` passes coordinates too; what they hold (this rank's own,
    # for one) comes with the arguments' atoms
    return any(kw.arg is None or kw.arg not in _OWN_RANK_KEYWORDS for kw in call.keywords)
