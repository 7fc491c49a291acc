"""TensorRT-LLM's PyExecutor world: the ``Distributed`` communication API,
request-state sources and the attention-DP mode.

Under attention-DP (``enable_attention_dp``) each TP rank owns its own request
stream, so request-derived state differs along TP (the DP dimension) as well
as along PP; without it rank 0's schedule is broadcast to the TP ranks and the
same state differs only between pipeline stages.  Per-request KV-transfer
progress is local to every rank in either mode.
"""

from __future__ import annotations

from .groups import World
from .specs import (
    PREDICATE,
    AgreementTemplate,
    CollectiveSpec,
    ModeSpec,
    NeutralTable,
    Preset,
    SourceSpec,
)

_A = "trtllm"

#: The allgather method of ``Distributed`` for each group: what a consensus
#: over that group calls, and what the runtime sanitizer carries its checks on.
GROUP_ALLGATHER = (("world", "allgather"), ("tp", "tp_allgather"), ("pp", "pp_allgather"),
                   ("cp", "cp_allgather"), ("tp_cp", "tp_cp_allgather"), ("dp", "dp_allgather"))


def _join(name: str) -> str:
    """An allgather's gathered list gets a neutral item from how it is read; a barrier needs none; a
    reduction takes its op's identity."""
    if name.endswith("allgather"):
        return "consumption"
    if name.endswith("allreduce"):
        return "trtllm.reduce"
    return "none" if name.endswith("barrier") else ""


# The identity of each op of ``Distributed``'s object reductions (the communicator module's ReduceOp,
# SUM when none is passed), for a payload that is visibly a number.
_NEUTRALS = {
    "trtllm.reduce": NeutralTable(
        identities=(("SUM", "0"), ("PROD", "1"), ("MAX", "float('-inf')"), ("MIN", "float('inf')")),
        default="SUM", op="op", op_arg=1, numeric_payload=True,
    ),
}


def _root(name: str) -> dict:
    """``Distributed``'s broadcasts take the payload, then the root (``root=``),
    and return the root's payload on every rank."""
    return {"root_arg": 1, "root_kw": ("root",)} if name.endswith("broadcast") else {}


_collectives = []
for _name, _group, _result in (
    ("tp_cp_allgather", "tp_cp", "uniform"), ("tp_cp_broadcast", "tp_cp", "uniform"),
    ("tp_allgather", "tp", "uniform"), ("tp_gather", "tp", "local"), ("tp_broadcast", "tp", "uniform"),
    ("tp_allreduce", "tp", "uniform"), ("tp_allgather_int64", "tp", "uniform"),
    ("cp_allgather", "cp", "uniform"), ("cp_broadcast", "cp", "uniform"),
    ("pp_allgather", "pp", "uniform"), ("pp_gather", "pp", "local"), ("pp_broadcast", "pp", "uniform"),
):
    _collectives.append(CollectiveSpec("*." + _name, _A, group=_group, result=_result, join=_join(_name),
                                       agreement="trtllm", **_root(_name)))
for _name in ("broadcast", "allgather", "barrier", "allreduce"):
    for _receiver in ("*.dist", "*._dist", "dist", "*.distributed", "*.communicator"):
        _collectives.append(CollectiveSpec(f"{_receiver}.{_name}", _A, group="world", join=_join(_name),
                                           agreement="trtllm", **_root(_name)))
for _name in ("mpi_allgather", "mpi_broadcast", "mpi_barrier", "mpi_allreduce"):
    _collectives.append(CollectiveSpec(_name, _A, group="world", join=_join(_name), **_root(_name)))
    _collectives.append(CollectiveSpec("*." + _name, _A, group="world", join=_join(_name), **_root(_name)))

#: The reduction method of ``Distributed`` for each group that has one.
GROUP_ALLREDUCE = (("world", "allreduce"), ("tp", "tp_allreduce"))
#: The attribute of ``Distributed`` holding each group's size.
GROUP_SIZE = (("world", "world_size"), ("tp", "tp_size"), ("pp", "pp_size"), ("cp", "cp_size"))

# Agree on a predicate: every rank of the group sends it, any rank's True wins.  Where the module
# already reduces with the communicator module's ``ReduceOp`` (and the group has an allreduce), a
# MAX reduction of the flag says the same in the file's own idiom.
_AGREEMENTS = {
    "trtllm": AgreementTemplate(test=f"any({{receiver}}.{{method}}(bool({PREDICATE})))", methods=GROUP_ALLGATHER,
                                preferred=("trtllm-reduce",), sizes=GROUP_SIZE,
                                all_test=f"all({{receiver}}.{{method}}(bool({PREDICATE})))"),
    "trtllm-reduce": AgreementTemplate(test=f"bool({{receiver}}.{{method}}(int(bool({PREDICATE})), op=ReduceOp.MAX))",
                                       methods=GROUP_ALLREDUCE, requires_name="ReduceOp",
                                       all_test=f"bool({{receiver}}.{{method}}(int(bool({PREDICATE})), "
                                                f"op=ReduceOp.MIN))"),
}

#: ``Mapping``: the world is TP x PP x CP; the attention-DP ranks and the MoE expert ranks are TP ranks.
#: A value agreed over the TP (or TP+CP) group of a stage then differs between stages only.
WORLD = World(factors=("tp", "pp", "cp"), inside=(("dp", "tp"), ("ep", "tp")))

# Under attention-DP the data-parallel ranks are the TP ranks (``Mapping``: world = TP x PP x CP):
# request state differs along TP and between stages, along no dimension of its own.
_ADP = frozenset({"tp", "pp"})
_PER_STAGE = frozenset({"pp"})
_request_dims = (("adp", _ADP), ("*", _PER_STAGE))

_request_state = [
    "self.active_requests", "*.active_requests", "*.request_queue",
    "*.executor_request_queue", "*.inflight_req_ids", "scheduled_batch", "*.scheduled_batch",
    "scheduled_requests", "*.scheduled_requests", "*.context_requests", "*.generation_requests",
    "*.paused_requests", "new_requests", "*.num_fetch_requests*", "*.num_scheduled_requests",
    "*.fitting_disagg_gen_init_requests", "*.canceled_req_ids",
]

_sources = [SourceSpec(p, "per-rank request state", what="value", dims=_request_dims)
            for p in _request_state]
# The waiting queue holds the requests rank 0 broadcast, not yet routed: every
# rank adds the same ones, and pops as many as the active counts allow, which
# attention-DP gathers over TP first (the routing to a TP rank comes after the
# pop).  The ranks of a stage hold the same queue; stages pop by their own
# active counts.
_sources.append(SourceSpec("*.waiting_queue", "per-stage request queue", what="value",
                           dims=(("*", _PER_STAGE),)))
# A rank's KV transfer progress is its own shard's: it differs along every
# dimension the executor's world is made of (``Mapping``: world = TP x PP x CP;
# the attention-DP and MoE expert ranks are TP ranks), and along no other.
_WORLD = (("*", frozenset({"tp", "pp", "cp"})),)
_sources += [
    SourceSpec("*.is_disagg_generation_transmission_in_progress", "per-rank KV transfer progress",
               what="value", dims=_WORLD),
    SourceSpec("*.is_disagg_generation_transmission_complete", "per-rank KV transfer progress",
               what="value", dims=_WORLD),
    SourceSpec("*.is_disagg_context_transmission_state", "per-rank KV transfer progress", what="value",
               dims=_WORLD),
    SourceSpec("*.kv_cache_transceiver.check_*", "per-rank KV transfer progress", dims=_WORLD),
    SourceSpec("*.get_num_free_blocks", "per-rank KV cache state", dims=_request_dims),
    SourceSpec("*.get_num_available_tokens", "per-rank KV cache state", dims=_request_dims),
]

PRESET = Preset(
    name="tensorrt_llm",
    world=WORLD,
    agreements=_AGREEMENTS,
    neutrals=_NEUTRALS,
    collectives=_collectives,
    not_collectives=["*.send", "*.recv", "*.isend", "*.irecv", "*.send_object", "*.recv_object",
                     "*.isend_object", "*.irecv_object", "*.pp_send", "*.pp_recv"],
    # ``recv_object(src, tag)`` hands back the object; ``recv``/``pp_recv`` fill the tensor passed
    p2p_receives=["recv_object"],
    p2p_sends=["send", "isend", "send_object", "isend_object", "pp_send"],
    p2p_peer_keywords=["src", "dest"],
    sources=_sources,
    uniform=["*.enable_attention_dp", "*.mapping.enable_attention_dp", "*.benchmark_req_queues_size",
             "*.is_warmup", "*.dist.tp_size", "*.dist.pp_size", "*.dist.cp_size", "*.dist.world_size",
             "*.mapping.*_size", "*.max_batch_size", "*.max_num_tokens", "*.max_draft_len"],
    # Executors run under mpirun/MPIPoolExecutor: a rank that raises leaves the others
    # blocked in their next collective instead of ending the job.
    unhandled_exceptions="hang",
    # the executor's rank-crash kill: the event loop's wrapper calls it (in its
    # ``finally``, under the flag its ``except Exception`` sets) to end the
    # whole world when an exception left the loop on one rank
    job_ending_calls=["hard_kill_on_rank_crash"],
    # KV blocks for a (dummy) request come from this rank's own cache: a full
    # rank's manager refuses them (None, or an out-of-pages error)
    local_failures=["add_dummy_requests"],
    modes=[ModeSpec("adp", ("*.enable_attention_dp", "enable_attention_dp", "*.attention_dp_enabled"),
                    "attention data parallelism (each TP rank owns its own requests)")],
)
