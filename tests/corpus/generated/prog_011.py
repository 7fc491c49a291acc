"""SPMD program 011 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_011.py``; every rank prints one TRACE line.
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


class Worker1:
    """Owns this rank's queue."""

    def __init__(self, comm, queue):
        self.comm = comm
        self.queue = list(queue)

    def step(self, value):
        if self.queue:
            note("allreduce:1")
            return self.comm.allreduce(value)  # expect: CSL101
        return value


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    items = list(range(rank % 3))
    remaining = len(items)
    while note("allreduce:2") and comm.allreduce(remaining) > 0:
        if remaining > 0:
            remaining -= 1
            acc += 1
    try:
        note("bcast:3")
        acc += comm.bcast(rank * 2 + 1, root=0)
        if rank == 0:
            raise ValueError("local check failed")
        acc += 1
    except ValueError:
        acc -= 1
    acc = Worker1(comm, items).step(acc)
    payload = len(items) if rank == 0 else 0
    note("allreduce:4")
    acc += comm.allreduce(payload)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
