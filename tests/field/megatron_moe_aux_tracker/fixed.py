"""MoE auxiliary-loss tracker filled lazily by the routers that ran on this stage.

Upstream: NVIDIA/Megatron-LM, fix commit e6759409675b9911c529d3054ca9dc40c10802e5
          (MR !2719, "fix(moe): Fix Hang Issue with MoE+Dense Hybrid models").
Group: pp (the tracker is all-reduced across the pipeline-parallel group).
Why ranks diverge: see buggy.py.
Variant: fixed -- the names to reduce come from the configuration (the same
on every stage); a stage without routers first creates zero entries for them.
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


def configured_loss_names(args):
    names = []
    if args.moe_router_load_balancing_type in ("aux_loss", "seq_aux_loss"):
        names.append("load_balancing_loss")
    if args.moe_z_loss_coeff is not None:
        names.append("z_loss")
    return names


def reduce_router_losses_across_stages(loss_names, num_layers):
    for name in loss_names:
        if name not in _AUX_LOSS_TRACKER:
            _AUX_LOSS_TRACKER[name] = {"values": torch.zeros(num_layers, device="cuda")}
    for name in loss_names:
        values = _AUX_LOSS_TRACKER[name]["values"]
        dist.all_reduce(values, group=parallel_state.get_pipeline_model_parallel_group())


def log_moe_metrics(args, writer, iteration):
    reduce_router_losses_across_stages(configured_loss_names(args), args.num_layers)
    if writer is not None:
        for name, entry in _AUX_LOSS_TRACKER.items():
            writer.add_scalar(name, entry["values"].sum().item(), iteration)
