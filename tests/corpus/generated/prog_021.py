"""SPMD program 021 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_021.py``; every rank prints one TRACE line.
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
    note("gather:1")
    collected = comm.gather(len(items), root=0)
    if collected is not None:
        acc += sum(collected)
    for u0 in range(size):
        if (items) and (note("allreduce:2") and comm.allreduce(acc) > 0):  # expect: CSL101
            acc += 1
    sub = comm.Split(rank % 2, rank)
    if rank % 2 == 1:
        acc += sub.allreduce(acc)
    try:
        limit = int(LIMIT)
    except (TypeError, ValueError):
        limit = 1
    if limit > 1:
        note("allreduce:3")
        acc += comm.allreduce(rank * 2 + 1)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
