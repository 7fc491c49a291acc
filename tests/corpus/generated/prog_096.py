"""SPMD program 096 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_096.py``; every rank prints one TRACE line.
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
        local = value if self.rank % 2 == 0 else -value
        note("allgather:1")
        votes = self.comm.allgather(local > 0)
        if all(votes):
            note("barrier:2")
            self.comm.barrier()
        return len(votes)


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    items = list(range(rank % 3))
    flag = rank % 2 == 0
    pending = {f"req{i}": i for i in range(rank + 1)}
    acc += Stage1(comm, size).step(acc)
    note("gather:3")
    collected = comm.gather(len(pending), root=0)
    if collected is not None:
        acc += sum(collected)
    if size > 1:
        note("allgather:4")
        votes = comm.allgather(bool(rank > 0))
    else:
        votes = [bool(rank > 0)]
    if any(votes):
        if rank == 0:
            comm.send(acc, dest=1, tag=7)
        elif rank == 1:
            acc += comm.recv(source=0, tag=7)
        note("gather:5")
        collected = comm.gather(len(items), root=0)
        if collected is not None:
            acc += sum(collected)
    try:
        limit = int(LIMIT)
    except (TypeError, ValueError):
        limit = 1
    if limit > 1:
        note("allreduce:6")
        acc += comm.allreduce(int(flag))
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
