"""SPMD program 023 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_023.py``; every rank prints one TRACE line.
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


def checked_sum_1(comm, entries):
    """Sum entry counts; refuses to run without entries."""
    acc = 0
    try:
        assert entries, "no local entries"
        note("allreduce:1")
        acc += comm.allreduce(len(entries))  # expect: CSL104
    except AssertionError:
        return -1
    return acc


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    items = list(range(rank % 3))
    acc += len(items)
    if LIMIT > 2:
        acc += checked_sum_1(comm, items)
    if not items:
        acc = acc * 2 % 97
        note("bcast:pair1")
        acc += comm.bcast(rank, root=0)
    else:
        note("bcast:pair1")
        acc += comm.bcast(1, root=0)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
