"""SPMD program 074 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_074.py``; every rank prints one TRACE line.
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
        note("allreduce:1")
        acc += comm.allreduce(value)  # expect: CSL101
    return value + acc


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    items = list(range(rank % 3))
    pending = {f"req{i}": i for i in range(rank + 1)}
    note("allreduce:2")
    shared, local = comm.allreduce(len(items)), rank * 2 + 1
    if shared > 0:
        note("bcast:3")
        acc += comm.bcast(rank, root=0)
    acc += local
    for u0 in range(size):
        acc = maybe_sync_1(comm, len(pending) > 1, acc)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
