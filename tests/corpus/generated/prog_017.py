"""SPMD program 017 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_017.py``; every rank prints one TRACE line.
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
        note("barrier:1")
        comm.barrier()  # expect: CSL101
    return value + acc


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    items = list(range(rank % 3))
    flag = rank % 2 == 0
    pending = {f"req{i}": i for i in range(rank + 1)}
    note("allreduce:2")
    total = comm.allreduce(len(items))
    if len(pending) > 1:
        acc = acc * 2 % 97
        note("barrier:pair1")
        comm.barrier()
    else:
        note("barrier:pair1")
        comm.barrier()
    for u0 in range(total):
        if size == 2:
            acc = maybe_sync_1(comm, rank % 2 == 1, acc)
    if not items:
        acc += sum(items)
    else:
        acc += int(flag)
    try:
        note("allgather:3")
        acc += sum(comm.allgather(len(items)))
        if len(items) > 0:
            raise ValueError("local check failed")
        acc += 1
    except ValueError:
        acc -= 1
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
