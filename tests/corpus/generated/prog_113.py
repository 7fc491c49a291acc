"""SPMD program 113 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_113.py``; every rank prints one TRACE line.
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


def exchange_1(comm, value):
    """Combine `value` over all ranks (sum)."""
    if comm.Get_size() == 1:
        return value
    note("allreduce:1")
    return comm.allreduce(value)


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    items = list(range(rank % 3))
    flag = rank % 2 == 0
    pending = {f"req{i}": i for i in range(rank + 1)}
    if rank % 2 == 1:
        acc += int(flag)
        note("bcast:pair1")
        acc += comm.bcast(acc, root=0)
    else:
        note("bcast:pair1")
        acc += comm.bcast(acc, root=0)
    acc += exchange_1(comm, len(pending))
    for j0 in range(len(items)):
        acc -= 4
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
