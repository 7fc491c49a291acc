"""SPMD program 095 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_095.py``; every rank prints one TRACE line.
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


def validate_2(entries):
    """Reject an empty local backlog."""
    if not entries:
        raise ValueError("empty backlog")
    return len(entries)


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
    acc += len(items)
    if LIMIT > 2:
        acc += Stage1(comm, size).step(acc)
        note("allreduce:2")
        shared, local = comm.allreduce(rank * 2 + 1), len(pending)
        if shared > 0:
            note("allgather:3")
            acc += sum(comm.allgather(int(flag)))
        acc += local
    if size % 2 == 1:
        for u1 in range(2):
            try:
                acc += validate_2(items)
                note("allreduce:4")
                acc += comm.allreduce(len(pending))  # expect: CSL104
            except ValueError:
                acc -= 1
    note("bcast:5")
    acc += comm.bcast(len(pending), root=0)
    if rank == 0:
        comm.send(acc, dest=1, tag=7)
    elif rank == 1:
        acc += comm.recv(source=0, tag=7)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
