"""Language corners around collectives: closures, decorators, inheritance,
try/else, loop exits after the collective, seeded randomness."""

import json
import random

import torch
import torch.distributed as dist
from mpi4py import MPI


def sync_in_closure(tensor):
    def reduce_now():
        dist.all_reduce(tensor)

    if dist.get_rank() == 0:
        reduce_now()  # expect: CSL101
    return tensor


@torch.no_grad()
def decorated_all_reduce(tensor):
    dist.all_reduce(tensor)
    return tensor


def call_decorated_on_odd_ranks(tensor):
    if dist.get_rank() % 2 == 1:
        decorated_all_reduce(tensor)  # expect: CSL101
    return tensor


class Communicator:
    @staticmethod
    def sync(tensor):
        dist.all_reduce(tensor)
        return tensor

    @classmethod
    def sync_all(cls, tensors):
        for tensor in tensors:
            cls.sync(tensor)
        return tensors


def static_wrapper_on_leader(tensor):
    if dist.get_rank() == 0:
        Communicator.sync(tensor)  # expect: CSL101
    return tensor


def static_wrapper_everywhere(tensor):
    return Communicator.sync(tensor)


class BaseStage:
    def __init__(self):
        self.rank = dist.get_rank()

    def exchange(self, tensor):
        dist.all_reduce(tensor)
        return tensor


class LeaderStage(BaseStage):
    def step(self, tensor):
        """The inherited method reduces; only the leader calls it."""
        if self.rank == 0:
            self.exchange(tensor)  # expect: CSL101
        return tensor


class FollowerStage(BaseStage):
    def step(self, tensor):
        tensor = super().exchange(tensor)
        if self.rank != 0:
            tensor = tensor * 2
        return tensor


def parse_then_barrier(path):
    """The barrier runs only where the local file parsed."""
    try:
        with open(path) as handle:
            config = json.load(handle)
    except ValueError:
        config = None
    else:
        dist.barrier()  # expect: CSL104
    return config


def reduce_then_local_skip(tensor, steps):
    """The rank test comes after the collective and only skips local work."""
    for _ in range(steps):
        dist.all_reduce(tensor)
        if dist.get_rank() == 0:
            continue
        tensor = tensor * 0.5
    return tensor


def reduce_then_local_break(tensor, steps):
    """Leaving the loop on one rank skips that rank's next reductions."""
    for _ in range(steps):
        dist.all_reduce(tensor)  # expect: CSL103
        if tensor.sum().item() > dist.get_rank():
            break
    return tensor


def seeded_sampling(tensor, seed):
    """Every rank seeds its generator identically, so draws agree."""
    generator = random.Random(seed)
    if generator.random() < 0.5:
        dist.all_reduce(tensor)
    return tensor


def rank_seeded_sampling(tensor, seed):
    generator = random.Random(seed + dist.get_rank())
    if generator.random() < 0.5:
        dist.all_reduce(tensor)  # expect: CSL101
    return tensor


def mpi_buffer_broadcast(data):
    """The root fills the buffer; every rank enters Bcast."""
    comm = MPI.COMM_WORLD
    buffer = torch.zeros(8).numpy()
    if comm.Get_rank() == 0:
        buffer[:] = data
    comm.Bcast(buffer, root=0)
    return buffer


def mpi_barrier():
    MPI.COMM_WORLD.Barrier()


def mpi_allgather(obj):
    return MPI.COMM_WORLD.allgather(obj)


def wrapper_barrier_on_root():
    if MPI.COMM_WORLD.Get_rank() == 0:
        mpi_barrier()  # expect: CSL101


def wrapper_gather_then_branch(local_ready):
    everyone = mpi_allgather(local_ready)
    if all(everyone):
        mpi_barrier()
    return everyone
