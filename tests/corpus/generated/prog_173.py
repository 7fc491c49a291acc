"""SPMD program 173 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_173.py``; every rank prints one TRACE line.
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
    pending = {f"req{i}": i for i in range(rank + 1)}
    try:
        limit = int(LIMIT)
    except (TypeError, ValueError):
        limit = 1
    if limit > 1:
        note("allreduce:2")
        acc += comm.allreduce(1)
    assert 0 <= rank < size, "rank out of range"
    note("bcast:3")
    acc += comm.bcast(acc, root=0)
    note("gather:4")
    votes = comm.gather(len(pending), root=0)
    note("bcast:5")
    go = comm.bcast(sum(votes) > 0 if votes is not None else None, root=0)
    if go:
        acc += Stage1(comm, size).step(acc)
        if rank == 0:
            comm.send(acc, dest=1, tag=7)
        elif rank == 1:
            acc += comm.recv(source=0, tag=7)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
