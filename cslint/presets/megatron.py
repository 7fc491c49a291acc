"""Megatron-core's ``parallel_state``: the groups
(``get_tensor_model_parallel_group()``, ``get_pipeline_model_parallel_group()``,
``get_data_parallel_group()``, ``get_expert_model_parallel_group()``, whose
names say the dimension) and the pipeline-stage predicates beyond
``is_pipeline_first_stage``/``is_pipeline_last_stage`` (in ``torch_distributed``),
which are the same on every rank of one stage (they differ along ``pp`` only).
The dynamic inference engine's waiting requests and active-request count are
this data-parallel rank's own.
"""

from __future__ import annotations

from .specs import Preset, SourceSpec

_PP = (("*", frozenset({"pp"})),)

_sources = [
    SourceSpec(f"*{name}", "pipeline stage", dims=_PP)
    for name in ("is_pipeline_stage_before_split", "is_pipeline_stage_after_split", "is_pipeline_stage_at_split",
                 "is_inside_encoder", "is_inside_decoder", "is_rank_in_embedding_group",
                 "is_rank_in_position_embedding_group")
]

# The dynamic inference engine's request state is this rank's own: each data-parallel
# (and expert-parallel) rank admits, schedules and finishes its own requests.
_DP_EP = (("*", frozenset({"dp", "ep"})),)
_sources += [
    SourceSpec("*.waiting_request_ids", "per-rank request state", what="value", dims=_DP_EP),
    SourceSpec("*.get_active_request_count", "per-rank request state", dims=_DP_EP),
]

PRESET = Preset(
    name="megatron",
    sources=_sources,
)
