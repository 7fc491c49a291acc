"""SGLang's process groups: the same ``GroupCoordinator`` shape as vLLM
(``get_tp_group()``, ``get_pp_group()``, ``get_attention_tp_group()``...),
``broadcast_pyobj`` over a given group, and the scheduler's stage identity
(``pp_rank``, ``pp_group.is_first_rank``), which is the same on every rank of
one pipeline stage.
"""

from __future__ import annotations

from . import CollectiveSpec, Preset

_T = "torch"

_collectives = [
    # broadcast_pyobj(data, rank, dist_group, src): the source rank's object
    # on every rank of dist_group (a size broadcast, then the payload).
    CollectiveSpec("*broadcast_pyobj", _T, group_arg=2, group_kw="dist_group", result="uniform"),
]

PRESET = Preset(
    name="sglang",
    collectives=_collectives,
    relative_ranks=["is_first_rank", "is_last_rank", "rank_in_group"],
)
