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

What a DP rank scheduled for a step (the input batch's ``num_reqs``, the scheduler output's
``total_num_scheduled_tokens``) is its own: it differs along ``dp`` and is the same on the TP and PP workers of one
engine.  A step with no tokens on one DP rank while its peers have work is the upstream hang of PR #28774; the
runner's compensating dummy step (an arm that joins the peers' coordination before returning empty) is matched by
the analysis (``uniformity._arm_joins``).
"""

from __future__ import annotations

from .specs import CollectiveSpec, Preset, SourceSpec

_T = "torch"

_collectives = [
    # The node-locality test: an all-reduce of per-rank flags over the group
    # given first, whose result every member receives.
    CollectiveSpec("*in_the_same_node_as", _T, group_arg=0, group_kw="pg", result="uniform"),
    CollectiveSpec("vllm.distributed.*.in_the_same_node_as", _T, group_arg=0, group_kw="pg", result="uniform"),
    # A ``StatelessProcessGroup`` (a group over a TCP store, made outside
    # torch.distributed): ``broadcast_obj(obj, src)`` hands every member the
    # source's object (the source gets back what it passed), and
    # ``all_gather_obj(obj)`` every member the list of all of them; the
    # receivers wait in the store for the source's post.  Over the group the
    # receiver names (``pg.broadcast_obj``: ``group:pg``), as ``pg.barrier()``.
    CollectiveSpec("*.broadcast_obj", _T, result="uniform", root_arg=1, root_kw=("src",), operation="broadcast"),
    CollectiveSpec("*.all_gather_obj", _T, result="uniform", operation="all_gather"),
    # FlashInfer's all-reduce fusion workspace, made over the group it is
    # handed (``group=``, wrapped in the ``comm_backend`` too): the members
    # allocate their buffers and exchange the IPC (or multicast) handles
    # through that group, so every member must enter it, and what it hands
    # back -- a workspace, or the failure of one the topology cannot give
    # (no NVSwitch multicast) -- is the same on every member.  A member that
    # failed alone inside it would leave its peers waiting in the exchange,
    # not at a later collective.  What each member puts in is the shape
    # asked for (``max_token_num``); its ``rank`` only places it.
    CollectiveSpec("flashinfer.comm.create_allreduce_fusion_workspace", _T, group_kw="group", result="uniform",
                   payload=None, payload_kw=("max_token_num",)),
]

# This rank's schedule.  Under data parallelism every DP rank runs its own
# scheduler, so what it scheduled for the step differs along ``dp``; the TP
# and PP workers of one engine receive the same scheduler output.
_DP = (("*", frozenset({"dp"})),)
_sources = [SourceSpec(pattern, "per-rank schedule", what="value", dims=_DP) for pattern in (
    "*input_batch.num_reqs", "*.num_reqs", "*.total_num_scheduled_tokens",
)]

# vLLM's logger (``init_logger``) adds once-per-process variants of the
# emitting methods, which log through the standard ones: like those they
# raise nothing (a failing handler reports and returns), so a ``try`` body's
# ``logger.warning_once(...)`` sends no rank into a handler of its own.
_uniform = ["*.debug_once", "*.info_once", "*.warning_once", "*.error_once"]

PRESET = Preset(
    name="vllm",
    collectives=_collectives,
    sources=_sources,
    uniform=_uniform,
    relative_ranks=["is_first_rank", "is_last_rank", "rank_in_group"],
    # a group coordinator's point-to-point calls between ranks of its group
    not_collectives=["*.send_object", "*.recv_object"],
    p2p_receives=["recv_object", "recv_tensor_dict"],
    p2p_sends=["send_object", "send_tensor_dict"],
    p2p_peer_keywords=["src", "dst"],
    # a process group made from a TCP rendezvous of the given ranks
    rendezvous=["stateless_init_torch_distributed_process_group"],
    # ``GroupCoordinator(group_name=n)`` is named ``f"{n}:{k}"`` (``_get_unique_name``) and hands that
    # name with its groups to the device communicator it builds (``cpu_group=``, ``device_group=``,
    # ``unique_name=``)
    group_names=[("unique_name", ":", ("cpu_group", "device_group"))],
)
