"""SPMD program 009 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_009.py``; every rank prints one TRACE line.
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
        note("allreduce:1")
        return self.comm.allreduce(value)


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    items = list(range(rank % 3))
    flag = rank % 2 == 0
    pending = {f"req{i}": i for i in range(rank + 1)}
    note("barrier:2")
    comm.barrier()
    try:
        limit = int(LIMIT)
    except (TypeError, ValueError):
        limit = 1
    if limit > 1:
        note("allreduce:3")
        acc += comm.allreduce(len(pending))
    note("allgather:4")
    agreed0 = comm.allgather(bool(rank == size - 1))
    if any(agreed0):
        acc += Stage1(comm, size).step(acc)
        assert 0 <= rank < size, "rank out of range"
        note("allgather:5")
        acc += sum(comm.allgather(rank))
    payload = rank if not flag else 0
    note("allreduce:6")
    acc += comm.allreduce(payload)
    note("gather:7")
    votes = comm.gather(len(items), root=0)
    note("bcast:8")
    go = comm.bcast(sum(votes) > 0 if votes is not None else None, root=0)
    if go:
        for j1 in items:
            acc = acc * 2 % 97
        for j1 in range(rank + 1):
            acc -= 4
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
