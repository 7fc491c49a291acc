"""SPMD program 070 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_070.py``; every rank prints one TRACE line.
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
    t0 = time.monotonic()
    if rank == 0:
        time.sleep(0.15)
    slow = time.monotonic() - t0 > 0.1
    note("allgather:2")
    agreed0 = comm.allgather(bool(slow))
    if any(agreed0):
        note("gather:3")
        votes = comm.gather(rank * 2 + 1, root=0)
        note("bcast:4")
        go = comm.bcast(sum(votes) > 0 if votes is not None else None, root=0)
        if go:
            if len(pending) > 1:
                acc -= 1
            note("gather:5")
            collected = comm.gather(len(pending), root=0)
            if collected is not None:
                acc += sum(collected)
        acc += Stage1(comm, size).step(acc)
    acc += len(pending)
    note("allreduce:6")
    shared, local = comm.allreduce(rank), rank * 2 + 1
    if shared > 0:
        note("allgather:7")
        acc += sum(comm.allgather(1))
    acc += local
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
