"""A model-parallel training step: loss averaging, logging, timed exit."""

import sys
import time

import torch
import torch.distributed as dist

from . import parallel_state as mpu
from .parallel_state import get_data_parallel_group, is_pipeline_last_stage


def average_losses_across_data_parallel_group(losses):
    averaged = torch.cat([loss.view(1) for loss in losses])
    dist.all_reduce(averaged, group=get_data_parallel_group())
    return averaged / dist.get_world_size(group=get_data_parallel_group())


def reduce_loss_on_last_stage(loss):
    """Every rank of a data-parallel group sits on the same pipeline stage."""
    if is_pipeline_last_stage():
        return average_losses_across_data_parallel_group([loss])
    return None


def barrier_on_last_stage(loss):
    """The world barrier is entered by the last pipeline stage only."""
    if is_pipeline_last_stage():
        dist.barrier()  # expect: CSL101
    return loss


def broadcast_loss_from_last_stage(loss):
    last = mpu.get_pipeline_model_parallel_world_size() - 1
    if not is_pipeline_last_stage():
        loss = torch.zeros(1)
    dist.broadcast(loss, src=last, group=mpu.get_pipeline_model_parallel_group())
    return loss


def broadcast_on_tensor_leader(tensor):
    """Only the TP leader enters the TP broadcast."""
    if mpu.get_tensor_model_parallel_rank() == 0:
        dist.broadcast(tensor, src=0, group=mpu.get_tensor_model_parallel_group())  # expect: CSL101
    return tensor


def reduce_if_tensor_parallel(tensor):
    if mpu.get_tensor_model_parallel_world_size() > 1:
        dist.all_reduce(tensor, group=mpu.get_tensor_model_parallel_group())
    return tensor


def exit_after_duration_local(start, limit_minutes):
    """Each rank compares its own clock with the limit."""
    elapsed = (time.time() - start) / 60.0
    if elapsed > limit_minutes:
        dist.barrier()  # expect: CSL101
        sys.exit(0)


def exit_after_duration_agreed(start, limit_minutes):
    elapsed = (time.time() - start) / 60.0
    done = torch.tensor([int(elapsed > limit_minutes)])
    dist.all_reduce(done, op=dist.ReduceOp.MAX)
    if done.item():
        dist.barrier()
        sys.exit(0)


def log_memory(iteration, log_interval):
    if dist.get_rank() == 0 and iteration % log_interval == 0:
        print(f"iteration {iteration}: {torch.cuda.memory_allocated()} bytes")


def check_memory_and_sync(limit_bytes):
    """Local memory pressure decides whether to enter the barrier."""
    if torch.cuda.memory_allocated() > limit_bytes:
        dist.barrier()  # expect: CSL101


def adapter_scale_sync(lora_config, tensor):
    """A LoRA rank is a hyper-parameter, the same on every process."""
    if lora_config.max_lora_rank > 16:
        dist.all_reduce(tensor)
    return tensor


def broadcast_from(tensor, src_rank):
    """`src_rank` is agreed by the caller; validating it keeps all ranks together."""
    if src_rank < 0:
        raise ValueError("src_rank must be non-negative")
    dist.broadcast(tensor, src=src_rank)
    return tensor


def check_batch_not_empty(batch):
    """An assertion on this rank's batch stops it before the reduction."""
    local = [sample for sample in batch if sample.owner == dist.get_rank()]
    assert local, "empty local batch"
    dist.all_reduce(torch.tensor([len(local)]))  # expect: CSL102


def dispatch_by_role(tensor):
    role = "leader" if dist.get_rank() == 0 else "follower"
    match role:
        case "leader":
            dist.barrier()  # expect: CSL101
        case _:
            pass
    return tensor
