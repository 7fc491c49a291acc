"""SPMD program 162 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_162.py``; every rank prints one TRACE line.
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
    if rank != 0:
        note("barrier:pair1")
        comm.barrier()
    acc -= 2
    if rank == 0:
        note("barrier:pair1")
        comm.barrier()
    if rank == 0:
        acc += sum(items)
        note("allreduce:pair2")
        acc += comm.allreduce(rank * 2 + 1)
    else:
        note("allreduce:pair2")
        acc += comm.allreduce(rank)
    if rank == size - 1:
        acc += sum(items)
        note("allgather:pair3")
        acc += sum(comm.allgather(int(flag)))
    else:
        note("allgather:pair3")
        acc += sum(comm.allgather(rank * 2 + 1))
    acc += Stage1(comm, size).step(acc)
    for j0 in range(len(items)):
        acc += int(flag)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
