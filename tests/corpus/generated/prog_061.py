"""SPMD program 061 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_061.py``; every rank prints one TRACE line.
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


def exchange_1(comm, value):
    """Combine `value` over all ranks (echo)."""
    rank = comm.Get_rank()
    if rank == 0:
        value = value + 1
    note("bcast:1")
    return comm.bcast(value, root=0)


class Stage2:
    """A pipeline step whose collective every rank enters."""

    def __init__(self, comm, world):
        self.comm = comm
        self.world = world
        self.rank = comm.Get_rank()

    def step(self, value):
        local = value if self.rank % 2 == 0 else -value
        note("allgather:2")
        votes = self.comm.allgather(local > 0)
        if all(votes):
            note("barrier:3")
            self.comm.barrier()
        return len(votes)


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    acc += exchange_1(comm, rank * 2 + 1)
    note("allreduce:4")
    acc += comm.allreduce(rank)
    for i0 in range(2):
        acc += Stage2(comm, size).step(acc)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
