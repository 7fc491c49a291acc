"""Process-group construction and membership-guarded collectives; the
"first local process prepares, the others wait" barrier idiom; entry points
that receive their rank as an argument."""

from contextlib import contextmanager

import torch
import torch.distributed as dist
from mpi4py import MPI

_GROUP = None


def initialize_groups(group_size):
    """Every rank creates every group (new_group is collective); a rank keeps its own."""
    global _GROUP
    rank = dist.get_rank()
    world = dist.get_world_size()
    for start in range(0, world, group_size):
        ranks = list(range(start, start + group_size))
        group = dist.new_group(ranks)
        if rank in ranks:
            _GROUP = group
    dist.all_reduce(torch.zeros(1), group=_GROUP)


def reduce_within_first_pair(tensor):
    """Only the members call a collective on their own subgroup: that is the whole group."""
    ranks = [0, 1]
    pair = dist.new_group(ranks)
    if dist.get_rank() in ranks:
        dist.all_reduce(tensor, group=pair)
    return tensor


def reduce_world_within_first_pair(tensor):
    """The same membership test in front of a world collective leaves the others out."""
    if dist.get_rank() in (0, 1):
        dist.all_reduce(tensor)  # expect: CSL101
    return tensor


def barrier_in_sub_communicator(comm):
    """Non-members get COMM_NULL and have nothing to enter."""
    sub = comm.Create(comm.group.Incl([0, 1]))
    if sub != MPI.COMM_NULL:
        sub.Barrier()


@contextmanager
def first_local_process_prepares(local_rank):
    """The other processes wait in the first barrier while the first one prepares,
    then it releases them with its own barrier: each rank enters exactly one."""
    if local_rank not in (-1, 0):
        dist.barrier()
    yield
    if local_rank == 0:
        dist.barrier()


def prepare_dataset(args, build):
    with first_local_process_prepares(args.local_rank):
        dataset = build()
    return dataset


def prepare_on_first_process_only(args, build):
    """The first process waits for peers that never come."""
    dataset = build()
    if args.local_rank == 0:
        dist.barrier()  # expect: CSL101
    return dataset


def spawned_worker(rank, world_size, steps):
    """Entry point of a spawned process: the rank arrives as an argument."""
    dist.init_process_group("gloo", rank=rank, world_size=world_size)
    tensor = torch.ones(1)
    for _ in range(steps):
        dist.all_reduce(tensor)
    if rank == 0:
        dist.barrier()  # expect: CSL101
    dist.destroy_process_group()
