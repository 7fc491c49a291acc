"""SGLang's process groups: the same ``GroupCoordinator`` shape as vLLM
(``get_tp_group()``, ``get_pp_group()``, ``get_attention_tp_group()``...),
``broadcast_pyobj`` over a given group, and the scheduler's stage identity
(``pp_rank``, ``pp_group.is_first_rank``), which is the same on every rank of
one pipeline stage.

What a rank's KV sender or receiver reports (``kv_sender.poll()``) is that
rank's transfer progress, and the checksum of the KV slice it received
(``expected_kv_checksum``) is its own, which the ranks agree on before acting
on them.

SGLang's TP group holds the attention-TP, attention-CP and attention-DP
ranks of a stage (``tp_size == attn_tp_size * attn_cp_size * attn_dp_size``,
and the MoE EP x DP x TP ranks, the same ranks factored otherwise), while
its attention-TP group (which ``get_dp_tp_group()`` returns with attention
DP, and which the group words read as ``tp``) holds none of the CP or DP
peers.  So the runtime's code (``sglang.srt``: the diffusion runtime lays its
groups out otherwise) names the TP group by words of its own
(:data:`WORLD`): ``get_tp_group()`` and ``get_parallel().tp_group`` (and what
a file binds to them) are the group spanning ``{tp, cp, dp, ep}``; a value agreed over the attention-TP
group still differs between CP and DP peers
(tests/test_presets_group_worlds.py, tests/test_analysis_group_getters.py).
"""

from __future__ import annotations

from .groups import World
from .specs import CollectiveSpec, Preset, SourceSpec

_T = "torch"

_collectives = [
    # broadcast_pyobj(data, rank, dist_group, src): the source rank's object
    # on every rank of dist_group (a size broadcast, then the payload).  The
    # name itself, not a suffix: a helper named after it (one that broadcasts
    # over groups of its own choosing, ``attn_cp_tp_broadcast_pyobj(data)``)
    # is followed into its body, where the groups are.  ``src`` is the root,
    # a rank id of the world (``group.ranks[0]``: the group's first member).
    CollectiveSpec(name, _T, group_arg=2, group_kw="dist_group", result="uniform", root_arg=3, root_kw=("src",))
    for name in ("broadcast_pyobj", "*.broadcast_pyobj")
]

# Disaggregation: each rank polls its own KV sender/receiver; the answer is
# per-rank transfer progress until the ranks agree on it.
_sources = [SourceSpec(pattern, "per-rank KV transfer progress") for pattern in (
    "*.sender.poll", "*kv_sender.poll", "*.receiver.poll", "*kv_receiver.poll",
)] + [
    # The KV transfer checksums (PR #39500): the digest the prefill side sent
    # for the KV slice this rank received (``req.expected_kv_checksum``, read
    # from this rank's metadata buffer by ``get_kv_checksum``) -- each rank of
    # the attention TP group receives and verifies its own slice, so a
    # mismatch is this rank's until the ranks agree on it (PR #39729).
    SourceSpec("*.expected_kv_checksum", "per-rank KV transfer checksum", what="value"),
    SourceSpec("*.get_kv_checksum", "per-rank KV transfer checksum"),
]

#: The runtime's words for its full TP group (see the module docstring): its
#: getter, the parallel state's field (``get_parallel().tp_group``, or a
#: local ``parallel = get_parallel()``) and the helpers over it.  Not the bare ``tp_group``: layers,
#: caches and helpers name a group they are handed so, which may be the
#: attention-TP group (``DecodeKVCacheOffloadManager(tp_group=self.dp_tp_cpu_group)``).
WORLD = World(packages=("sglang.srt",), words=tuple((word, "tp_cp_dp_ep") for word in (
    "get_tp_group", "get_parallel.tp_group", "parallel.tp_group",
    # its size, as a test that the group has several ranks reads it (``if get_parallel().tp_size > 1:``)
    "get_parallel.tp_size", "parallel.tp_size", "get_tensor_model_parallel_world_size",
    # the runtime's tensor-parallel helpers (``distributed.communication_op``) run over it too,
    # where the torch pack reads them over a plain TP group
    "tensor_model_parallel_all_reduce", "tensor_model_parallel_all_gather", "tensor_model_parallel_gather",
    "tensor_model_parallel_reduce_scatter")))

PRESET = Preset(
    name="sglang",
    collectives=_collectives,
    sources=_sources,
    relative_ranks=["is_first_rank", "is_last_rank", "rank_in_group"],
    # a group coordinator's point-to-point calls between ranks of its group
    not_collectives=["*.send_object", "*.recv_object"],
    p2p_receives=["recv_object", "recv_tensor_dict"],
    p2p_sends=["send_object", "send_tensor_dict"],
    p2p_peer_keywords=["src", "dst"],
    # a process group made outside the default world (weight sync, RL)
    rendezvous=["init_custom_process_group"],
    # The diffusion runtime's degrees: the server arguments resolve
    # ``enable_cfg_parallel`` false exactly where the classifier-free-guidance
    # degree is 1, and ``sp_degree`` is the sequence-parallel group's size, so
    # where either says one rank the CFG or SP groups (``cfg_cpu_group``,
    # ``sp_cpu_group``) have no peers.
    group_switches=[("*.enable_cfg_parallel", "cfg"), ("*.sp_degree", "sp")],
    world=WORLD,
)
