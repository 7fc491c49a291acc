"""SPMD program 097 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_097.py``; every rank prints one TRACE line.
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
    note("gather:1")
    votes = comm.gather(int(flag), root=0)
    note("bcast:2")
    go = comm.bcast(sum(votes) > 0 if votes is not None else None, root=0)
    if go:
        note("allreduce:3")
        shared, local = comm.allreduce(int(flag)), int(flag)
        if shared > 0:
            note("bcast:4")
            acc += comm.bcast(int(flag), root=0)
        acc += local
        try:
            limit = int(LIMIT)
        except (TypeError, ValueError):
            limit = 1
        if limit > 1:
            note("allreduce:5")
            acc += comm.allreduce(len(items))
    note("gather:6")
    votes = comm.gather(rank, root=0)
    note("bcast:7")
    go = comm.bcast(sum(votes) > 0 if votes is not None else None, root=0)
    if go:
        for j1 in items:
            acc += len(pending)
    if rank == size - 1:
        acc += sum(items)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
