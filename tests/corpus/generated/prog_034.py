"""SPMD program 034 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_034.py``; every rank prints one TRACE line.
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


def validate_1(entries):
    """Reject an empty local backlog."""
    if not entries:
        raise ValueError("empty backlog")
    return len(entries)


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    items = list(range(rank % 3))
    flag = rank % 2 == 0
    try:
        limit = int(LIMIT)
    except (TypeError, ValueError):
        limit = 1
    if limit > 1:
        note("allgather:1")
        acc += sum(comm.allgather(1))
    try:
        acc += validate_1(items)
        note("bcast:2")
        acc += comm.bcast(rank, root=0)  # expect: CSL104
    except ValueError:
        acc -= 1
    payload = int(flag) if len(items) > 0 else 0
    note("allreduce:3")
    acc += comm.allreduce(payload)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
