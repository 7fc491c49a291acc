"""SGLang's process groups: the same ``GroupCoordinator`` shape as vLLM
(``get_tp_group()``, ``get_pp_group()``, ``get_attention_tp_group()``...),
``broadcast_pyobj`` over a given group, and the scheduler's stage identity
(``pp_rank``, ``pp_group.is_first_rank``), which is the same on every rank of
one pipeline stage.

What a rank's KV sender or receiver reports (``kv_sender.poll()``) is that
rank's transfer progress, and the checksum of the KV slice it received
(``expected_kv_checksum``) is its own, which the ranks agree on before acting
on them.

SGLang's TP group holds the attention-CP and attention-DP ranks of a stage
too, but its attention-TP group (which ``get_dp_tp_group()`` returns with
attention DP, and which the group words read as ``tp``) holds none of the CP
peers: the two are orthogonal factors of one DP shard.  So no wider span is
declared for ``tp`` here; a value agreed over the attention-TP group still
differs between CP peers (tests/test_analysis_group_getters.py).
"""

from __future__ import annotations

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
)
