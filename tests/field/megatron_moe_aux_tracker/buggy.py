"""MoE auxiliary-loss tracker filled lazily by the routers that ran on this stage.

Upstream: NVIDIA/Megatron-LM, fix commit e6759409675b9911c529d3054ca9dc40c10802e5
          (MR !2719, "fix(moe): Fix Hang Issue with MoE+Dense Hybrid models").
Group: pp (the tracker is all-reduced across the pipeline-parallel group).
Why ranks diverge: a router adds its loss name to the module-global tracker
the first time it runs.  In a MoE+dense hybrid, a pipeline stage that holds
only dense layers never runs a router, so its tracker stays empty and its
loop below makes no all-reduce, while stages with MoE layers make one per
loss name.
Variant: buggy -- the reduction iterates over whatever names this rank's
routers happened to register.
"""

import torch
import torch.distributed as dist

from megatron.core import parallel_state

_AUX_LOSS_TRACKER = {}


def record_router_loss(name, loss, layer_number, num_layers):
    """Called from a MoE router's forward on the stage that owns the layer."""
    if name not in _AUX_LOSS_TRACKER:
        _AUX_LOSS_TRACKER[name] = {"values": torch.zeros(num_layers, device="cuda")}
    _AUX_LOSS_TRACKER[name]["values"][layer_number - 1] += loss.detach()


def reduce_router_losses_across_stages():
    for name in _AUX_LOSS_TRACKER:
        values = _AUX_LOSS_TRACKER[name]["values"]
        dist.all_reduce(values, group=parallel_state.get_pipeline_model_parallel_group())  # expect: CSL103


def log_moe_metrics(writer, iteration):
    reduce_router_losses_across_stages()
    if writer is not None:
        for name, entry in _AUX_LOSS_TRACKER.items():
            writer.add_scalar(name, entry["values"].sum().item(), iteration)
