"""Negative (safe): a pipeline-stage predicate guarding a data-parallel all-reduce.

Upstream: NVIDIA/Megatron-LM at commit 175ac74a40710642ffbc7a91cb5fc095732ee495:
          pretrain_gpt.py `loss_func` (averages the loss across the data-parallel
          group) called from megatron/schedules.py `forward_step` under
          `mpu.is_pipeline_last_stage()`.
Group: dp.
Why it looks divergent: the loss all-reduce runs only on the last pipeline stage.
Why it is safe: the data-parallel group is formed across replicas at the
same pipeline stage, so the stage predicate has one value inside the group
-- all of its members take the branch, or none does.
"""

import torch
import torch.distributed as dist

from megatron import mpu


def average_losses_across_data_parallel_group(losses):
    averaged = torch.cat([loss.clone().detach().view(1) for loss in losses])
    dist.all_reduce(averaged, group=mpu.get_data_parallel_group())
    return averaged / dist.get_world_size(group=mpu.get_data_parallel_group())


def loss_func(loss_mask, output_tensor):
    losses = output_tensor.float()
    loss_mask = loss_mask.view(-1).float()
    loss = torch.sum(losses.view(-1) * loss_mask) / loss_mask.sum()
    averaged = average_losses_across_data_parallel_group([loss])
    return loss, {"lm loss": averaged[0]}


def forward_step(forward_step_func, data_iterator, model, forward_data_store):
    output_tensor, loss_fn = forward_step_func(data_iterator, model)
    if mpu.is_pipeline_last_stage():
        output_tensor, loss_reduced = loss_fn(output_tensor)
        forward_data_store.append(loss_reduced)
    return output_tensor
