"""DeepSpeed: ``deepspeed.comm`` (the torch.distributed-shaped facade,
usually imported as ``dist``), the ``groups`` accessors and the pipeline
engine's stage identity.

A pipeline stage id (``self.stage_id``, ``grid.get_stage_id()``) and the
stage predicates (``is_first_stage()``, ``is_last_stage()``) are the same on
every rank of one stage: they differ along ``pp`` only.  The grid's
"slice-parallel" group and rank (``get_slice_parallel_group()``,
``get_slice_parallel_rank()``) are its Megatron-style tensor slicing, the
model-parallel ranks of one stage: ``tp`` (the dimension words of
:func:`~cslint.presets.group_from_text` and ``rank_names``).
"""

from __future__ import annotations

from .specs import CollectiveSpec, Preset, SourceSpec
from .torch_distributed import GROUP_POSITIONS

_T = "torch"
_PP = (("*", frozenset({"pp"})),)

_FUNCTIONS = {
    "all_reduce": "uniform", "broadcast": "uniform", "all_gather": "uniform", "all_gather_into_tensor": "uniform",
    "allgather_fn": "uniform", "all_gather_object": "uniform", "broadcast_object_list": "uniform",
    "barrier": "uniform", "monitored_barrier": "uniform", "inference_all_reduce": "uniform",
    "reduce_scatter": "shard", "reduce_scatter_tensor": "shard", "reduce_scatter_fn": "shard",
    "all_to_all_single": "local", "reduce": "local", "gather": "local", "scatter": "local",
}

# deepspeed.comm keeps torch.distributed's signatures, so a group passed by
# position sits where torch's does, and the tensor or list passed first holds
# the group's agreed result afterwards (``dist.all_reduce(flag, op=MAX)``:
# ``flag`` is the group's maximum on every member); its own helpers follow the
# same order (``allgather_fn(output, input, group)`` gathers into ``output``)
_POSITIONS = dict(GROUP_POSITIONS, allgather_fn=2, inference_all_reduce=2, reduce_scatter_fn=3)
_INPLACE = {name: (0,) for name, result in _FUNCTIONS.items() if result == "uniform" and "barrier" not in name}
_collectives = [CollectiveSpec(f"{module}.{name}", _T, result=result, inplace=_INPLACE.get(name, ()),
                               group_arg=_POSITIONS.get(name))
                for module in ("deepspeed.comm", "deepspeed.comm.comm") for name, result in _FUNCTIONS.items()]

_sources = [
    SourceSpec("*.get_stage_id", "pipeline stage", dims=_PP),
    SourceSpec("*.is_first_stage", "pipeline stage", dims=_PP),
    SourceSpec("*.is_last_stage", "pipeline stage", dims=_PP),
    SourceSpec("self.stage_id", "pipeline stage", what="value", dims=_PP),
    SourceSpec("*.grid.stage_id", "pipeline stage", what="value", dims=_PP),
]

# ZeRO-3: a module built under ``deepspeed.zero.Init()`` has its parameters
# partitioned over the ranks as it is made; every forward all-gathers them
# (and a full ``state_dict`` gathers every partition).
_PARTITIONING = [
    ("deepspeed.zero.Init", ("state_dict",)),
    ("deepspeed.runtime.zero.Init", ("state_dict",)),
    ("deepspeed.runtime.zero.partition_parameters.Init", ("state_dict",)),
]

# The pipeline engine's ``p2p.send(tensor, dest_stage)`` / ``p2p.recv(tensor,
# src_stage)`` (``deepspeed/runtime/pipe/p2p.py``) move a tensor between two
# stages; where torch cannot send point-to-point, each is a broadcast from the
# sending stage over the two-rank group of the pair of stages
# (``_get_send_recv_group``: the group of the lower stage and the one after
# it), so the sender's send and the receiver's receive are one collective of
# those two ranks alone.
_PAIR_EXCHANGES = [
    ("deepspeed.runtime.pipe.p2p.send", "send", 1, "dest_stage"),
    ("deepspeed.runtime.pipe.p2p.recv", "recv", 1, "src_stage"),
]

PRESET = Preset(
    name="deepspeed",
    collectives=_collectives,
    sources=_sources,
    partitioning_contexts=_PARTITIONING,
    job_tests=["deepspeed.comm.is_initialized"],
    # with no group, the size of the default group: the whole job (torch's signature)
    world_sizes=["deepspeed.comm.get_world_size", "deepspeed.comm.comm.get_world_size"],
    pair_exchanges=_PAIR_EXCHANGES,
    # the class names of DeepSpeed's learning-rate schedulers (``type(x).__name__ in VALID_LR_SCHEDULES``):
    # a scheduler is never a rank's data (a loader, a batch)
    no_data_class_names=["deepspeed.runtime.lr_schedules.VALID_LR_SCHEDULES"],
)
