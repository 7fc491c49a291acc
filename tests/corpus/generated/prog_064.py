"""SPMD program 064 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_064.py``; every rank prints one TRACE line.
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


def sync_pending_1(comm, entries):
    """Sum the entry counts of all ranks."""
    acc = 0
    if len(entries) == 0:
        return 0
    note("allgather:1")
    acc += sum(comm.allgather(len(entries)))  # expect: CSL102
    return acc


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    items = list(range(rank % 3))
    note("allreduce:2")
    total = comm.allreduce(len(items))
    if total > 0:
        for u1 in range(2):
            acc += sync_pending_1(comm, items)
    if rank == size - 1:
        acc += sum(items)
        note("allreduce:pair1")
        acc += comm.allreduce(acc)
    else:
        note("allreduce:pair1")
        acc += comm.allreduce(1)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
