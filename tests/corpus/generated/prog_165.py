"""SPMD program 165 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_165.py``; every rank prints one TRACE line.
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
    pending = {f"req{i}": i for i in range(rank + 1)}
    if rank == size - 1:
        acc += sum(items)
        note("allreduce:pair1")
        acc += comm.allreduce(len(pending))
    else:
        note("allreduce:pair1")
        acc += comm.allreduce(1)
    acc += Stage1(comm, size).step(acc)
    if size == 3:
        if len(items) > 0:
            note("barrier:2")
            comm.barrier()  # expect: CSL101
        else:
            note("bcast:3")
            acc += comm.bcast(1, root=0)  # expect: CSL101
    if size > 1:
        if rank == 0:
            comm.send(acc, dest=1, tag=7)
        elif rank == 1:
            acc += comm.recv(source=0, tag=7)
    sub = comm.Split(int(rank == 0), rank)
    if int(rank == 0) == 1:
        sub.barrier()
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
