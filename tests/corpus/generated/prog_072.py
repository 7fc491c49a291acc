"""SPMD program 072 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_072.py``; every rank prints one TRACE line.
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
    flag = rank % 2 == 0
    pending = {f"req{i}": i for i in range(rank + 1)}
    t0 = time.monotonic()
    if rank == 0:
        time.sleep(0.15)
    slow = time.monotonic() - t0 > 0.1
    note("allreduce:2")
    any_flag = comm.allreduce(int(flag), op=MPI.MAX)
    note("gather:3")
    collected = comm.gather(len(pending), root=0)
    if collected is not None:
        acc += sum(collected)
    if any_flag:
        note("gather:4")
        votes = comm.gather(len(pending), root=0)
        note("bcast:5")
        go = comm.bcast(sum(votes) > 0 if votes is not None else None, root=0)
        if go:
            acc += sum(items)
            if slow:
                acc += rank * 2 + 1
                note("bcast:pair1")
                acc += comm.bcast(len(items), root=0)
            else:
                note("bcast:pair1")
                acc += comm.bcast(rank, root=0)
        payload = rank * 2 + 1 if flag else 0
        note("allreduce:6")
        acc += comm.allreduce(payload)
    for u0 in range(size):
        acc = Worker1(comm, items).step(acc)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
