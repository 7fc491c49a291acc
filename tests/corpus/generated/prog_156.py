"""SPMD program 156 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_156.py``; every rank prints one TRACE line.
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
    note("gather:2")
    votes = comm.gather(len(pending), root=0)
    note("bcast:3")
    go = comm.bcast(sum(votes) > 0 if votes is not None else None, root=0)
    if go:
        payload = len(items) if len(items) > 0 else 0
        note("allreduce:4")
        acc += comm.allreduce(payload)
    launch_rank = int(os.environ.get("PMI_RANK", "0"))
    if launch_rank > 0:
        note("allreduce:5")
        acc += comm.allreduce(len(items))  # expect: CSL101
    remaining = len(items)
    while note("allreduce:6") and comm.allreduce(remaining) > 0:
        if remaining > 0:
            remaining -= 1
            acc += 1
    acc += Stage1(comm, size).step(acc)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
