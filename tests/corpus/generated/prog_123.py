"""SPMD program 123 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_123.py``; every rank prints one TRACE line.
"""

import os
import sys
import time

from mpi4py import MPI

TRACE = []
LIMIT = 3


def note(kind):
    """Record the collective about to run; true, so it can sit inside `and` chains."""
    TRACE.append(kind)
    return True


def exchange_2(comm, value):
    """Combine `value` over all ranks (max)."""
    rank = comm.Get_rank()
    if rank == 0:
        value = value + 1
    note("bcast:1")
    return comm.bcast(value, root=0)


class Stage1:
    """A pipeline step whose collective every rank enters."""

    def __init__(self, comm, world):
        self.comm = comm
        self.world = world
        self.rank = comm.Get_rank()

    def step(self, value):
        if self.world == 1:
            return value
        if self.rank == 0:
            value += 1
        note("allreduce:2")
        return self.comm.allreduce(value)


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    items = list(range(rank % 3))
    pending = {f"req{i}": i for i in range(rank + 1)}
    acc += sum(items)
    note("gather:3")
    votes = comm.gather(len(pending), root=0)
    note("bcast:4")
    go = comm.bcast(sum(votes) > 0 if votes is not None else None, root=0)
    if go:
        sub = comm.Split(rank % 2, rank)
        if rank % 2 == 0:
            acc += sub.allreduce(acc)
    acc += Stage1(comm, size).step(acc)
    assert 0 <= rank < size, "rank out of range"
    note("allgather:5")
    acc += sum(comm.allgather(rank * 2 + 1))
    if size > 1:
        note("allgather:6")
        votes = comm.allgather(bool(rank > 0))
    else:
        votes = [bool(rank > 0)]
    if any(votes):
        acc += exchange_2(comm, len(pending))
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
