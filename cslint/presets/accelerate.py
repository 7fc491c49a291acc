"""Hugging Face ``accelerate`` and the trainers built on it (``trl``).

What the API issues.  ``Accelerator``/``PartialState``/``AcceleratorState``
methods ``wait_for_everyone`` (a barrier), ``gather``, ``gather_for_metrics``,
``reduce``, ``pad_across_processes`` (a size all-gather, then a pad) and
``get_state_dict`` (a full gather under FSDP and ZeRO-3), and the module
functions of ``accelerate.utils`` (``gather``, ``gather_object``,
``broadcast``, ``broadcast_object_list``, ``reduce``, ``pad_across_processes``,
``wait_for_everyone``) are collectives over every process of the state.
``Accelerator.backward`` runs the wrapped model's backward, which all-reduces
gradients under DDP, FSDP and DeepSpeed.  ``trl``'s
``unwrap_model_for_generation`` gathers ZeRO-3 partitioned weights on entry.

What the state says about this process.  ``process_index`` and
``local_process_index`` are this process's rank (world and node);
``num_processes`` is the same on every process.

What ``Accelerator.prepare`` and ``prepare_data_loader`` return is this
process's shard of the data: its batches differ between processes, their
number does not (``even_batches``, the default), so a loop over a prepared
loader runs equally often everywhere.

What a process passes to a gather (``gather``, ``gather_object``,
``gather_for_metrics``, ``pad_across_processes``) is its own results -- of its
own batches, which is why they are gathered: the parameters a function hands
on to one are this process's data, in structure (None or not, how many) as
well as contents (``payload_local``).

``broadcast_object_list(objects)`` fills ``objects`` in place with the source
process's list, which is then the same everywhere.
"""

from __future__ import annotations

from .specs import KIND_DATA_SHARD, KIND_RANK_ID, CollectiveSpec, Preset, SourceSpec

_A = "accelerate"

#: accelerate.utils functions: name -> (result, in-place positions)
_UTILS = {
    "gather": ("uniform", ()),
    "gather_object": ("uniform", ()),
    "broadcast": ("uniform", (0,)),
    "broadcast_object_list": ("uniform", (0,)),
    "reduce": ("uniform", ()),
    # the same shape on every process (what control flow reads), this process's contents
    "pad_across_processes": ("uniform", ()),
    "wait_for_everyone": ("uniform", ()),
}

#: the gathers: each process passes its own results (of its own batches), which differ
_GATHERS = frozenset({"gather", "gather_object", "gather_for_metrics", "pad_across_processes"})

_collectives = []
for _name, (_result, _inplace) in _UTILS.items():
    for _module in ("accelerate.utils.", "accelerate.utils.operations.", "accelerate.utils.other."):
        _collectives.append(CollectiveSpec(_module + _name, _A, group="world", result=_result, inplace=_inplace,
                                           payload_local=_name in _GATHERS))

# Methods of an Accelerator / PartialState.  ``wait_for_everyone`` and
# ``gather_for_metrics`` are distinctive names; the others only on a receiver
# that names the accelerator (``self.accelerator.gather``).
for _name, _result in (("wait_for_everyone", "uniform"), ("gather_for_metrics", "uniform")):
    _collectives.append(CollectiveSpec("*." + _name, _A, group="world", result=_result,
                                       payload_local=_name in _GATHERS))
for _name, _result in (("gather", "uniform"), ("reduce", "uniform"), ("pad_across_processes", "uniform"),
                       ("get_state_dict", "uniform"), ("backward", "uniform")):
    for _receiver in ("accelerator", "*.accelerator", "*_accelerator"):
        _collectives.append(CollectiveSpec(f"{_receiver}.{_name}", _A, group="world", result=_result,
                                           receiver="named", payload_local=_name in _GATHERS))

# trl: gathers the ZeRO-3 partitioned parameters for the block it opens.
for _pattern in ("unwrap_model_for_generation", "*.unwrap_model_for_generation"):
    _collectives.append(CollectiveSpec(_pattern, _A, group="world", result="uniform"))

_sources = [
    SourceSpec("*.process_index", KIND_RANK_ID, what="value"),
    SourceSpec("*.local_process_index", KIND_RANK_ID, what="value"),
    # What `prepare` hands back is this process's shard of the data loaders (and the wrapped
    # model): the batches differ, their number does not (`even_batches`, on by default).
    SourceSpec("*accelerator.prepare", KIND_DATA_SHARD),
    SourceSpec("*prepare_data_loader", KIND_DATA_SHARD),
]

PRESET = Preset(
    name="accelerate",
    collectives=_collectives,
    sources=_sources,
    uniform=["*.num_processes", "*.state.num_processes", "*.distributed_type", "*.use_distributed"],
    # the stand-ins a DeepSpeed configuration's own optimizer and scheduler are prepared through: never a
    # rank's data (a loader, a batch)
    no_data_classes=["accelerate.utils.DummyOptim", "accelerate.utils.DummyScheduler",
                     "accelerate.utils.deepspeed.DummyOptim", "accelerate.utils.deepspeed.DummyScheduler"],
)
