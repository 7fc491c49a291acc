"""SPMD program 106 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_106.py``; every rank prints one TRACE line.
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
    try:
        limit = int(LIMIT)
    except (TypeError, ValueError):
        limit = 1
    if limit > 1:
        note("bcast:1")
        acc += comm.bcast(rank * 2 + 1, root=0)
    remaining = len(items)
    while note("allreduce:2") and comm.allreduce(remaining) > 0:
        if remaining > 0:
            remaining -= 1
            acc += 1
    if size > 1:
        note("allgather:3")
        votes = comm.allgather(bool(len(items) > 0))
    else:
        votes = [bool(len(items) > 0)]
    if any(votes):
        note("allreduce:4")
        shared, local = comm.allreduce(len(items)), rank
        if shared > 0:
            note("bcast:5")
            acc += comm.bcast(1, root=0)
        acc += local
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
