"""vLLM's process groups: ``GroupCoordinator`` objects (``get_tp_group()``,
``get_pp_group()``, ``get_dp_group()``, ``get_ep_group()``,
``get_world_group()``, ``get_dcp_group()``, ``get_pcp_group()``) and the
module-level helpers built on them.

Which group a coordinator method runs over comes from the receiver's text
(``get_pp_group().broadcast_tensor_dict`` is over ``pp``); the method names
themselves are in ``torch_distributed``.  What a coordinator says about this
rank is relative to its own group: ``is_first_rank``, ``is_last_rank`` and
``rank_in_group`` of ``get_pp_group()`` tell pipeline stages apart and are the
same on every rank of one stage (``rank`` is the global rank).
"""

from __future__ import annotations

from . import CollectiveSpec, Preset

_T = "torch"

_collectives = [
    # The node-locality test: an all-reduce of per-rank flags over the group
    # given first, whose result every member receives.
    CollectiveSpec("*in_the_same_node_as", _T, group_arg=0, group_kw="pg", result="uniform"),
    CollectiveSpec("vllm.distributed.*.in_the_same_node_as", _T, group_arg=0, group_kw="pg", result="uniform"),
]

PRESET = Preset(
    name="vllm",
    collectives=_collectives,
    relative_ranks=["is_first_rank", "is_last_rank", "rank_in_group"],
)
