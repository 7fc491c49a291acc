"""SPMD program 063 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_063.py``; every rank prints one TRACE line.
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
    """Combine `value` over all ranks (sum)."""
    payload = value if value > 0 else 0
    note("allreduce:1")
    return comm.allreduce(payload, op=MPI.MAX)


def exchange_3(comm, value):
    """Combine `value` over all ranks (sum)."""
    if comm.Get_size() == 1:
        return value
    note("allreduce:2")
    return comm.allreduce(value)


class Stage1:
    """A pipeline step whose collective every rank enters."""

    def __init__(self, comm, world):
        self.comm = comm
        self.world = world
        self.rank = comm.Get_rank()

    def step(self, value):
        local = value if self.rank % 2 == 0 else -value
        note("allgather:3")
        votes = self.comm.allgather(local > 0)
        if all(votes):
            note("barrier:4")
            self.comm.barrier()
        return len(votes)


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    items = list(range(rank % 3))
    t0 = time.monotonic()
    if rank == 0:
        time.sleep(0.15)
    slow = time.monotonic() - t0 > 0.1
    acc += Stage1(comm, size).step(acc)
    payload = len(items) if slow else 0
    note("allreduce:5")
    acc += comm.allreduce(payload)
    acc += exchange_2(comm, rank)
    acc += exchange_3(comm, rank)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
