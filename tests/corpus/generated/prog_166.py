"""SPMD program 166 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_166.py``; every rank prints one TRACE line.
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
    try:
        note("allreduce:3")
        acc += comm.allreduce(acc)
        if rank == 0:
            raise ValueError("local check failed")
        acc += 1
    except ValueError:
        acc -= 1
    sub = comm.Split(int(rank > 0), rank)
    if int(rank > 0) == 0:
        acc += sub.allreduce(acc)
    acc += Stage1(comm, size).step(acc)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
