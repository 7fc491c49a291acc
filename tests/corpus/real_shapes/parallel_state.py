"""Process-group bookkeeping in the style of model-parallel training code."""

import torch.distributed as dist

_TENSOR_GROUP = None
_PIPELINE_GROUP = None
_DATA_GROUP = None


def get_tensor_model_parallel_group():
    return _TENSOR_GROUP


def get_pipeline_model_parallel_group():
    return _PIPELINE_GROUP


def get_data_parallel_group():
    return _DATA_GROUP


def get_tensor_model_parallel_rank():
    return dist.get_rank(group=_TENSOR_GROUP)


def get_tensor_model_parallel_world_size():
    return dist.get_world_size(group=_TENSOR_GROUP)


def get_pipeline_model_parallel_rank():
    return dist.get_rank(group=_PIPELINE_GROUP)


def get_pipeline_model_parallel_world_size():
    return dist.get_world_size(group=_PIPELINE_GROUP)


def is_pipeline_first_stage():
    return get_pipeline_model_parallel_rank() == 0


def is_pipeline_last_stage():
    return get_pipeline_model_parallel_rank() == get_pipeline_model_parallel_world_size() - 1
