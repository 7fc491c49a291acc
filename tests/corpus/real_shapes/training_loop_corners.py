"""Training-loop corners: globals, dict fields, walrus, writers on rank 0,
OOM-skipping steps, finally blocks, validation raises, cross-module aliases."""

import os

import torch
import torch.distributed as dist

from .serving import comm as collectives
from .serving.comm import maybe_sync_leader_only

RANK = int(os.environ.get("RANK", "0"))
WORLD_SIZE = int(os.environ.get("WORLD_SIZE", "1"))
SUPPORTED_DTYPES = (torch.float16, torch.bfloat16, torch.float32)


def barrier_on_global_rank_zero():
    """A module-level rank read from the environment."""
    if RANK == 0:
        dist.barrier()  # expect: CSL101


def barrier_when_distributed():
    if WORLD_SIZE > 1:
        dist.barrier()


def rank_in_a_dict(tensor):
    state = {"rank": dist.get_rank(), "step": 0}
    if state["rank"] == 0:
        dist.all_reduce(tensor)  # expect: CSL101
    return tensor


def step_in_a_dict(tensor):
    state = {"rank": dist.get_rank(), "step": 0}
    if state["step"] == 0:
        dist.all_reduce(tensor)
    return tensor


def local_batch_count(samples):
    return len(samples[dist.get_rank()::dist.get_world_size()])


def has_local_work(samples):
    return local_batch_count(samples) > 0


def reduce_if_local_work(samples, tensor):
    """Divergence returned through two helper levels."""
    if has_local_work(samples):
        dist.all_reduce(tensor)  # expect: CSL101
    return tensor


def reduce_if_walrus(samples, tensor):
    if (count := local_batch_count(samples)) > 0:
        dist.all_reduce(tensor)  # expect: CSL101
    return count


class LoggingTrainer:
    def __init__(self, model):
        self.model = model
        self.writer = open("train.log", "a") if dist.get_rank() == 0 else None

    def log_step(self, loss):
        """Reduce everywhere, write on the rank that owns the writer."""
        dist.all_reduce(loss)
        if self.writer is not None:
            self.writer.write(f"{loss.item()}\n")

    def log_step_reducing_in_writer_branch(self, loss):
        if self.writer is not None:
            dist.all_reduce(loss)  # expect: CSL101
            self.writer.write(f"{loss.item()}\n")

    def train_skipping_oom(self, batches):
        """A batch that runs out of memory on one rank skips that rank's reduction."""
        for batch in batches:
            try:
                loss = self.model(batch)
                loss.backward()
                dist.all_reduce(loss)  # expect: CSL104
            except torch.cuda.OutOfMemoryError:
                torch.cuda.empty_cache()
                continue

    def reduce_then_report_errors(self, loss):
        """The reduction is the first statement of the try: nothing local precedes it."""
        try:
            dist.all_reduce(loss)
        except RuntimeError as error:
            print(f"reduction failed: {error}")
            raise
        return loss


def finally_barrier_after_local_return(tensor):
    """`finally` runs on the early-return path too, so every rank reaches the barrier."""
    try:
        if dist.get_rank() == 0:
            return tensor
        tensor = tensor * 2
    finally:
        dist.barrier()
    return tensor


def validated_all_reduce(tensor):
    """Validation raises depend on the arguments, the same on every rank."""
    if tensor.dtype not in SUPPORTED_DTYPES:
        raise TypeError(f"unsupported dtype {tensor.dtype}")
    assert dist.get_world_size() % 2 == 0 or dist.get_world_size() == 1, "odd world"
    dist.all_reduce(tensor)
    return tensor


def broadcast_from_every_rank(tensor):
    """A uniform loop over sources; the rank only picks what to send."""
    world = dist.get_world_size()
    rank = dist.get_rank()
    for source in range(world):
        if source == rank:
            tensor.fill_(rank)
        dist.broadcast(tensor, src=source)
    return tensor


def gathered_rank_entry(tensor):
    """A rank-indexed read of a gathered list, used only locally."""
    gathered = [torch.zeros_like(tensor) for _ in range(dist.get_world_size())]
    dist.all_gather(gathered, tensor)
    if gathered[dist.get_rank()].sum() > 0:
        print("non-zero local entry")
    return gathered


def leader_reduces_through_alias(tensor):
    """A wrapper reached through a module alias."""
    if dist.get_rank() == 0:
        collectives.dp_sync(tensor)  # expect: CSL101
    return tensor


def leader_flag_by_keyword(tensor):
    return maybe_sync_leader_only(tensor=tensor, enabled=dist.get_rank() == 0)


def every_rank_through_alias(tensor):
    return collectives.dp_sync(tensor)
