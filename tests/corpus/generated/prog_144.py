"""SPMD program 144 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_144.py``; every rank prints one TRACE line.
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


def maybe_sync_1(comm, enabled, value):
    """Share `value` when enabled."""
    acc = 0
    if enabled:
        note("allgather:1")
        acc += sum(comm.allgather(value))  # expect: CSL101
    return value + acc


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    items = list(range(rank % 3))
    remaining = len(items)
    while note("allreduce:2") and comm.allreduce(remaining) > 0:
        if remaining > 0:
            remaining -= 1
            acc += 1
    if LIMIT > 2:
        acc = maybe_sync_1(comm, rank == 0, acc)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
