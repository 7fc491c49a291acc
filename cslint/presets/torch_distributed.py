"""torch.distributed and the process-group wrappers built on it.

Covers the functional API (``torch.distributed.all_reduce`` ...), and the
group-coordinator method names that vLLM, SGLang and Megatron-style code use
(``get_tp_group().all_reduce``, ``tensor_model_parallel_all_reduce``).
Ambiguous names (``broadcast``, ``gather``, ``barrier``) count only on a
receiver that looks like a communicator, so ``torch.gather``/``np.broadcast``
stay out.
"""

from __future__ import annotations

from .specs import (
    FLAG,
    KIND_DATA_SHARD,
    KIND_DEVICE_ID,
    KIND_FILESYSTEM,
    KIND_RANK_ID,
    PAYLOAD,
    PREDICATE,
    TENSOR,
    AgreementTemplate,
    CollectiveSpec,
    NeutralTable,
    Preset,
    SourceSpec,
)

_T = "torch"

# name -> (result, inplace positions)
_FUNCTIONAL = {
    "all_reduce": ("uniform", (0,)),
    "all_reduce_coalesced": ("uniform", (0,)),
    "broadcast": ("uniform", (0,)),
    "all_gather": ("uniform", (0,)),
    "all_gather_into_tensor": ("uniform", (0,)),
    "_all_gather_base": ("uniform", (0,)),
    "all_gather_object": ("uniform", (0,)),
    "all_gather_coalesced": ("uniform", (0,)),
    "broadcast_object_list": ("uniform", (0,)),
    "barrier": ("uniform", ()),
    "monitored_barrier": ("uniform", ()),
    "reduce_scatter": ("shard", ()),
    "reduce_scatter_tensor": ("shard", ()),
    "_reduce_scatter_base": ("shard", ()),
    "all_to_all": ("local", ()),
    "all_to_all_single": ("local", ()),
    "reduce": ("local", ()),
    "gather": ("local", ()),
    "gather_object": ("local", ()),
    "scatter": ("local", ()),
    "scatter_object_list": ("local", ()),
    "new_group": ("uniform", ()),
    "new_subgroups": ("uniform", ()),
}

# Where each function takes its group when it is passed by position
# (``dist.barrier(group)``, ``dist.all_reduce(t, op, group)``): torch.distributed's
# signatures, which deepspeed.comm repeats.
GROUP_POSITIONS = {
    "all_reduce": 2, "all_reduce_coalesced": 2, "broadcast": 2, "all_gather": 2, "all_gather_into_tensor": 2,
    "_all_gather_base": 2, "all_gather_object": 2, "all_gather_coalesced": 2, "broadcast_object_list": 2,
    "barrier": 0, "monitored_barrier": 0, "reduce_scatter": 3, "reduce_scatter_tensor": 3,
    "_reduce_scatter_base": 3, "all_to_all": 2, "all_to_all_single": 4, "reduce": 3, "gather": 3,
    "gather_object": 3, "scatter": 3, "scatter_object_list": 3,
}

# How a rank that contributes nothing still takes part (see CollectiveSpec.join):
# an in-place reduction reduces a scratch tensor holding the op's identity.
_JOIN = {"all_reduce": "torch.reduce", "barrier": "none", "monitored_barrier": "none"}

_collectives = []
# where a broadcast that fills its payload list in place with the root's list names its root
_ROOTS = {"broadcast_object_list": {"root_arg": 1, "root_kw": ("src", "group_src")}}
for _name, (_result, _inplace) in _FUNCTIONAL.items():
    for _prefix in ("torch.distributed.", "dist.", "torch.distributed.distributed_c10d.", "c10d."):
        _collectives.append(
            CollectiveSpec(_prefix + _name, _T, result=_result, inplace=_inplace, payload_kw=("tensor",),
                           join=_JOIN.get(_name, ""), agreement="torch.distributed",
                           group_arg=GROUP_POSITIONS.get(_name), **_ROOTS.get(_name, {}))
        )

# Group-coordinator and helper methods (receiver any: the names are distinctive).
for _name, _result in (
    ("all_reduce", "uniform"), ("all_gather", "uniform"), ("all_gatherv", "uniform"),
    ("all_gather_object", "uniform"), ("broadcast_object", "uniform"),
    ("broadcast_object_list", "uniform"), ("broadcast_tensor_dict", "uniform"),
    ("reduce_scatter", "shard"), ("reduce_scatterv", "local"), ("all_to_all", "local"),
    ("all_reduce_coalesced", "uniform"), ("all_gather_into_tensor", "uniform"),
):
    _collectives.append(CollectiveSpec("*." + _name, _T, result=_result))
# Ambiguous method names: only on a communicator-looking receiver.
for _name, _result in (("broadcast", "uniform"), ("barrier", "uniform"), ("gather", "local"),
                       ("scatter", "local"), ("reduce", "local"), ("monitored_barrier", "uniform")):
    _collectives.append(CollectiveSpec("*." + _name, _T, result=_result, receiver="comm",
                                       join="none" if _name.endswith("barrier") else ""))
# Module-level helpers of tensor-parallel libraries.
# (name, result, the operation each performs over tp)
for _name, _result, _operation in (
    ("tensor_model_parallel_all_reduce", "uniform", "all_reduce"),
    ("tensor_model_parallel_all_gather", "uniform", "all_gather"),
    ("tensor_model_parallel_gather", "local", "gather"),
    ("tensor_model_parallel_reduce_scatter", "shard", "reduce_scatter"),
    ("*reduce_from_tensor_model_parallel_region", "uniform", "all_reduce"),
    ("*gather_from_tensor_model_parallel_region", "uniform", "all_gather"),
    ("*reduce_scatter_to_sequence_parallel_region", "shard", "reduce_scatter"),
    ("*gather_from_sequence_parallel_region", "uniform", "all_gather"),
):
    _collectives.append(CollectiveSpec(_name, _T, group="tp", result=_result, operation=_operation))
    _collectives.append(CollectiveSpec("*." + _name.lstrip("*"), _T, group="tp", result=_result,
                                       operation=_operation))
# torch's symmetric-memory collectives, each told its group by the name the
# group is registered under (``group.group_name``): the kernels of every
# member read and write one another's buffers, so each waits for all of them.
# (name, result, in-place positions, where the group's name is passed, the operation)
for _name, _result, _inplace, _position, _operation in (
    ("multimem_all_reduce_", "uniform", (0,), 2, "all_reduce"),
    ("multimem_one_shot_all_reduce", "uniform", (), 2, "all_reduce"),
    ("one_shot_all_reduce", "uniform", (), 2, "all_reduce"),
    ("one_shot_all_reduce_out", "uniform", (3,), 2, "all_reduce"),
    ("two_shot_all_reduce_", "uniform", (0,), 2, "all_reduce"),
    ("two_shot_all_reduce_out", "uniform", (3,), 2, "all_reduce"),
    ("multimem_all_gather_out", "uniform", (2,), 1, "all_gather"),
    ("reduce_scatter_out", "shard", (), 1, "reduce_scatter"),
    ("_low_contention_all_gather", "uniform", (), 1, "all_gather"),
    ("_low_contention_reduce_scatter", "shard", (), 2, "reduce_scatter"),
    # the all-gathered input comes back beside its products with this rank's weights
    ("fused_all_gather_matmul", "local", (), 3, "all_gather"),
    ("fused_all_gather_scaled_matmul", "local", (), 5, "all_gather"),
    ("fused_matmul_reduce_scatter", "shard", (), 4, "reduce_scatter"),
    ("fused_scaled_matmul_reduce_scatter", "shard", (), 7, "reduce_scatter"),
):
    _collectives.append(CollectiveSpec("torch.ops.symm_mem." + _name, _T, result=_result, inplace=_inplace,
                                       group_arg=_position, group_kw="group_name", group_by_name="group_name",
                                       operation=_operation))
for _name in ("broadcast_tensor_dict", "all_gather_object", "broadcast_object_list"):
    _collectives.append(CollectiveSpec(_name, _T))
# Wrapping a module in DDP checks the parameter shapes across the group (an
# all-gather) and broadcasts rank 0's parameters and buffers.
for _name in ("torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel"):
    _collectives.append(CollectiveSpec(_name, _T, group_kw="process_group", result="uniform"))

# A data loader over a DataPipe agrees on a shared shuffling seed whenever an
# iterator is made (torch's ``_BaseDataLoaderIter``: a gloo ``new_group`` over
# every rank, then a broadcast of rank 0's seed), so making the iterator is a
# collective over the world.  Only the explicit call counts (``super().__iter__()``
# in a subclass, ``DataLoader.__iter__(self)``): a ``for`` over a loader is
# left alone, since most datasets are no DataPipe.
for _name in ("torch.utils.data.DataLoader.__iter__", "torch.utils.data.dataloader.DataLoader.__iter__"):
    _collectives.append(CollectiveSpec(_name, _T, result="local"))

_sources = [
    SourceSpec("torch.distributed.get_rank", KIND_RANK_ID),
    SourceSpec("dist.get_rank", KIND_RANK_ID),
    SourceSpec("*.get_rank", KIND_RANK_ID),
    SourceSpec("get_rank", KIND_RANK_ID),
    SourceSpec("*.get_local_rank", KIND_RANK_ID),
    SourceSpec("*.get_node_local_rank", KIND_RANK_ID),
    SourceSpec("get_local_rank", KIND_RANK_ID),
    SourceSpec("*.get_global_rank", KIND_RANK_ID),
    SourceSpec("*.get_group_rank", KIND_RANK_ID),
    SourceSpec("torch.cuda.current_device", KIND_DEVICE_ID),
    SourceSpec("*.cuda.current_device", KIND_DEVICE_ID),
    # the device-management (NVML) index of a device torch numbers (through
    # the visible-device list this rank was given): which device it is
    SourceSpec("torch.cuda._get_nvml_device_index", KIND_DEVICE_ID),
    SourceSpec("*.cuda._get_nvml_device_index", KIND_DEVICE_ID),
    SourceSpec("torch.cuda.mem_get_info", "local memory state"),
    SourceSpec("torch.cuda.memory_allocated", "local memory state"),
    SourceSpec("torch.cuda.memory_reserved", "local memory state"),
    SourceSpec("torch.cuda.max_memory_allocated", "local memory state"),
    SourceSpec("psutil.*", "local machine state"),
    SourceSpec("time.time", "wall clock"),
    SourceSpec("time.time_ns", "wall clock"),
    SourceSpec("time.perf_counter", "wall clock"),
    SourceSpec("time.perf_counter_ns", "wall clock"),
    SourceSpec("time.monotonic", "wall clock"),
    SourceSpec("time.monotonic_ns", "wall clock"),
    SourceSpec("time.process_time", "wall clock"),
    SourceSpec("datetime.datetime.now", "wall clock"),
    SourceSpec("datetime.now", "wall clock"),
    SourceSpec("datetime.datetime.utcnow", "wall clock"),
    SourceSpec("random.*", "randomness"),
    SourceSpec("numpy.random.*", "randomness"),
    SourceSpec("np.random.*", "randomness"),
    SourceSpec("uuid.uuid1", "randomness"),
    SourceSpec("uuid.uuid4", "randomness"),
    SourceSpec("secrets.*", "randomness"),
    SourceSpec("os.urandom", "randomness"),
    # A token sampled from a distribution a model computed (``torch.multinomial``): a tiny difference
    # in the logits between ranks (reduction order) flips the draw, and so do generators seeded per
    # rank; serving and generation code agrees on sampled tokens by a broadcast.  torch's other draws
    # (``rand``, ``randn``, ``randperm``) are mostly made alike by a shared seed on purpose (weight
    # initialisation, a data order): not sources.
    SourceSpec("torch.multinomial", "randomness"),
    SourceSpec("os.getpid", "process id"),
    SourceSpec("socket.gethostname", "host name"),
    SourceSpec("platform.node", "host name"),
    # What a rank sees of the filesystem: node-local disks, and shared ones
    # while another rank is still writing.
    SourceSpec("os.path.exists", KIND_FILESYSTEM),
    SourceSpec("os.path.isfile", KIND_FILESYSTEM),
    SourceSpec("os.path.isdir", KIND_FILESYSTEM),
    SourceSpec("os.path.getsize", KIND_FILESYSTEM),
    SourceSpec("os.path.getmtime", KIND_FILESYSTEM),
    SourceSpec("os.listdir", KIND_FILESYSTEM),
    SourceSpec("os.scandir", KIND_FILESYSTEM),
    SourceSpec("os.access", KIND_FILESYSTEM),
    SourceSpec("glob.glob", KIND_FILESYSTEM),
    SourceSpec("glob.iglob", KIND_FILESYSTEM),
    # Whether work handed to another thread of this process has finished
    # (``concurrent.futures.Future.done()``): thread scheduling is per process.
    SourceSpec("*future.done", "background thread progress"),
    SourceSpec("*fut.done", "background thread progress"),
    # A sampler that shards the dataset by rank yields different batches on
    # every rank (and different lengths when the dataset does not divide).
    SourceSpec("*DistributedSampler", KIND_DATA_SHARD),
    # Pipeline-stage predicates: the same on the ranks of one stage.
    SourceSpec("*is_pipeline_last_stage", "pipeline stage", dims=(("*", frozenset({"pp"})),)),
    SourceSpec("*is_pipeline_first_stage", "pipeline stage", dims=(("*", frozenset({"pp"})),)),
]

# Modules wrapped for data parallelism: their forward and the backward of
# what they compute communicate over the wrapper's group.
# (wrapper, the methods of the wrapped module that communicate besides its
# forward): a fully sharded module gathers every shard for a full state dict
# and reduces norms over the shards for clipping.
_SHARDED_METHODS = ("state_dict", "clip_grad_norm_", "summon_full_params")
_WRAPPERS = [
    ("torch.nn.parallel.DistributedDataParallel", ()),
    ("torch.nn.parallel.distributed.DistributedDataParallel", ()),
    ("torch.distributed.fsdp.FullyShardedDataParallel", _SHARDED_METHODS),
    ("torch.distributed.fsdp.fully_sharded_data_parallel.FullyShardedDataParallel", _SHARDED_METHODS),
    ("torch.distributed.fsdp.fully_shard", ()),
    ("torch.distributed._composable.fsdp.fully_shard", ()),
    ("fairscale.nn.data_parallel.FullyShardedDataParallel", _SHARDED_METHODS),
    ("fairscale.nn.FullyShardedDataParallel", _SHARDED_METHODS),
    # ColossalAI's Gemini: parameters kept in chunks sharded over the ranks,
    # gathered chunk by chunk in every forward
    ("colossalai.nn.parallel.GeminiDDP", ("state_dict",)),
    ("colossalai.zero.GeminiDDP", ("state_dict",)),
]

# A module's own attributes: its public methods and ``training``; every other attribute (its parameters,
# buffers, submodules, settings) is one its class binds, by name.
_MODULE_NAMES = (
    "T_destination", "add_module", "apply", "bfloat16", "buffers", "call_super_init", "children", "compile", "cpu",
    "cuda", "double", "dump_patches", "eval", "extra_repr", "float", "forward", "get_buffer", "get_extra_state",
    "get_parameter", "get_submodule", "half", "ipu", "load_state_dict", "modules", "mtia", "named_buffers",
    "named_children", "named_modules", "named_parameters", "parameters", "register_backward_hook",
    "register_buffer", "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
    "register_full_backward_pre_hook", "register_load_state_dict_post_hook", "register_load_state_dict_pre_hook",
    "register_module", "register_parameter", "register_state_dict_post_hook", "register_state_dict_pre_hook",
    "requires_grad_", "set_extra_state", "set_submodule", "share_memory", "state_dict", "to", "to_empty", "train",
    "training", "type", "xpu", "zero_grad",
)
# What ``fully_shard`` adds to the class of the module it shards in place (``FSDPModule``'s methods).
_FULLY_SHARDED_NAMES = (
    "reset_iter_state", "reshard", "set_all_reduce_hook", "set_allocate_memory_from_process_group_for_comm",
    "set_custom_all_gather", "set_custom_reduce_scatter", "set_force_sum_reduction_for_comms",
    "set_gradient_divide_factor", "set_is_last_backward", "set_modules_to_backward_prefetch",
    "set_modules_to_forward_prefetch", "set_post_optim_event", "set_reduce_scatter_divide_factor",
    "set_reduce_scatter_max_input_buffers", "set_reduce_scatter_unused_params", "set_requires_all_reduce",
    "set_requires_gradient_sync", "set_reshard_after_backward", "set_reshard_after_forward",
    "set_separate_reduce_scatter_group", "set_symm_mem_for_comm", "set_unshard_in_backward", "unshard",
)

_uniform = [
    "torch.distributed.get_world_size", "dist.get_world_size", "*.get_world_size", "get_world_size",
    "*.get_*_world_size", "get_*_world_size", "*.is_initialized", "torch.distributed.is_available",
    "*.is_available", "*.get_backend", "*.world_size", "*.group_size",
    # A group's members, by their global ranks: one list, the same on every
    # rank of the group (as its size is), whichever rank asks and however it
    # came to hold the group; a collective over that group runs on those ranks.
    "torch.distributed.get_process_group_ranks", "*.get_process_group_ranks", "get_process_group_ranks",
    # The job's hardware, asked of the runtime: a job runs on nodes of one
    # kind (the same devices, driver and software image), so every rank gets
    # the same answer -- and a failure to answer fails on every rank alike.
    # Which device a rank uses (current_device) and what that device holds
    # now (mem_get_info) are sources above, not this.
    "torch.cuda.get_device_properties", "torch.cuda.get_device_capability", "torch.cuda.get_device_name",
    "torch.cuda.device_count", "torch.cuda.get_arch_list", "torch.cuda.is_bf16_supported",
    "*.cuda.get_device_properties", "*.cuda.get_device_capability", "*.cuda.get_device_name",
    "*.cuda.device_count", "*.cuda.get_arch_list", "*.cuda.is_bf16_supported",
    # The same asked of the vendors' device-management libraries (NVML, AMD
    # SMI): the driver starting and stopping, a device's handle by its index,
    # and the node's topology between two given devices (peer-to-peer status,
    # NVLink/XGMI link type).  Nodes of one kind give the same answer for
    # the same devices, and a query fails by its operands, alike everywhere;
    # what a device holds now (memory, utilisation) is not among these.
    *(prefix + name for prefix in ("", "*.") for name in (
        "nvmlInit", "nvmlShutdown", "nvmlDeviceGetCount", "nvmlDeviceGetHandleByIndex",
        "nvmlDeviceGetHandleByPciBusId",
        "nvmlDeviceGetP2PStatus", "nvmlDeviceGetNvLinkState", "nvmlDeviceGetTopologyCommonAncestor",
        "nvmlDeviceGetCudaComputeCapability", "nvmlDeviceGetName",
        "amdsmi_init", "amdsmi_shut_down", "amdsmi_get_processor_handles", "amdsmi_topo_get_link_type",
        "amdsmi_topo_get_link_weight")),
]

# Agree on a predicate: a one-element flag reduced with MAX over the same
# group (on the device of a tensor parameter when there is one: NCCL reduces
# device tensors only; without one it stays on the CPU, which suits gloo).
_AGREEMENTS = {
    "torch.distributed": AgreementTemplate(
        test=f"bool({FLAG}.item())",
        setup=(f"{FLAG} = torch.tensor([1 if {PREDICATE} else 0])",
               f"{{receiver}}.all_reduce({FLAG}, op={{receiver}}.ReduceOp.MAX{{group_kw}})"),
        setup_on_device=(f"{FLAG} = torch.tensor([1 if {PREDICATE} else 0], device={TENSOR}.device)",
                         f"{{receiver}}.all_reduce({FLAG}, op={{receiver}}.ReduceOp.MAX{{group_kw}})"),
        imports=("import torch",),
        needs_group_expr=True,
    ),
}

# The identity of each ReduceOp, as a tensor of the payload's shape and dtype.
_MAX_IDENTITY = f"float('-inf') if {PAYLOAD}.is_floating_point() else torch.iinfo({PAYLOAD}.dtype).min"
_MIN_IDENTITY = f"float('inf') if {PAYLOAD}.is_floating_point() else torch.iinfo({PAYLOAD}.dtype).max"
_NEUTRALS = {
    "torch.reduce": NeutralTable(
        identities=(
            ("SUM", f"torch.zeros_like({PAYLOAD})"),
            ("PRODUCT", f"torch.ones_like({PAYLOAD})"),
            ("MAX", f"torch.full_like({PAYLOAD}, {_MAX_IDENTITY})"),
            ("MIN", f"torch.full_like({PAYLOAD}, {_MIN_IDENTITY})"),
            ("BAND", f"torch.full_like({PAYLOAD}, -1)"),  # every bit set (True for bool)
            ("BOR", f"torch.zeros_like({PAYLOAD})"),
            ("BXOR", f"torch.zeros_like({PAYLOAD})"),
        ),
        default="SUM", op="op", op_arg=1, imports=("import torch",),
    ),
}

PRESET = Preset(
    name="torch_distributed",
    agreements=_AGREEMENTS,
    neutrals=_NEUTRALS,
    collectives=_collectives,
    not_collectives=["*.send", "*.recv", "*.isend", "*.irecv", "*.send_object_list", "*.recv_object_list",
                     "*.batch_isend_irecv", "*.P2POp"],
    # ``recv`` fills the tensor passed and hands back the sender's rank, ``recv_object_list`` fills the
    # list passed: no receive hands back the data
    p2p_filling_receives=["recv"],
    p2p_sends=["send", "isend"],
    p2p_peer_keywords=["src", "dst", "group_src", "group_dst"],
    sources=_sources,
    uniform=_uniform,
    data_parallel_wrappers=_WRAPPERS,
    in_place_wrappers=[("torch.distributed.fsdp.fully_shard", _FULLY_SHARDED_NAMES),
                       ("torch.distributed._composable.fsdp.fully_shard", _FULLY_SHARDED_NAMES)],
    attribute_bases=[("torch.nn.Module", _MODULE_NAMES), ("torch.nn.modules.module.Module", _MODULE_NAMES)],
    # a module's call runs its forward (torch.nn.Module), autograd runs a Function's forward and backward
    # (torch.autograd.Function); and, of the standard library every rank runs beside torch (this pack is always
    # on), a started thread or process runs its run (threading.Thread, multiprocessing.Process)
    protocol_methods=["forward", "backward", "run"],
    rendezvous=["init_process_group", "new_group", "new_subgroups", "new_subgroups_by_enumeration",
                "init_device_mesh"],
    job_tests=["torch.distributed.is_initialized", "torch.distributed.is_available"],
    world_sizes=["torch.distributed.get_world_size"],
    # a model, an optimizer and a learning-rate scheduler are never a rank's data (a loader, a batch)
    no_data_classes=["torch.nn.Module", "torch.nn.modules.module.Module", "torch.optim.Optimizer",
                     "torch.optim.optimizer.Optimizer", "torch.optim.lr_scheduler.LRScheduler",
                     "torch.optim.lr_scheduler._LRScheduler"],
    # maps over a pytree that rebuild its containers as they are (same types, keys and lengths) and replace
    # only its leaves: (canonical name, position of the tree)
    structure_maps=[("torch.utils._pytree.tree_map", 1), ("torch.utils._pytree.tree_map_only", 2),
                    ("torch.utils._pytree.tree_map_with_path", 1)],
)
