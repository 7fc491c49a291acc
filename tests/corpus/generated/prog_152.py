"""SPMD program 152 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_152.py``; every rank prints one TRACE line.
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


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    items = list(range(rank % 3))
    flag = rank % 2 == 0
    pending = {f"req{i}": i for i in range(rank + 1)}
    remaining = len(items)
    while note("allreduce:1") and comm.allreduce(remaining) > 0:
        if remaining > 0:
            remaining -= 1
            acc += 1
    note("gather:2")
    votes = comm.gather(int(flag), root=0)
    note("bcast:3")
    go = comm.bcast(sum(votes) > 0 if votes is not None else None, root=0)
    if go:
        note("gather:4")
        collected = comm.gather(len(pending), root=0)
        if collected is not None:
            acc += sum(collected)
    for j0 in items:
        acc += len(pending)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
