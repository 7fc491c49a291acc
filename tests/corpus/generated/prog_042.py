"""SPMD program 042 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_042.py``; every rank prints one TRACE line.
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
    note("allreduce:2")
    agreed0 = comm.allreduce(int(bool(flag)), op=MPI.MAX)
    if agreed0:
        acc += Stage1(comm, size).step(acc)
        remaining = len(items)
        while note("allreduce:3") and comm.allreduce(remaining) > 0:
            if remaining > 0:
                remaining -= 1
                acc += 1
    try:
        note("allgather:4")
        acc += sum(comm.allgather(rank))
        if items:
            raise ValueError("local check failed")
        acc += 1
    except ValueError:
        acc -= 1
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
