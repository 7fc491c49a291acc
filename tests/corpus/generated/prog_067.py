"""SPMD program 067 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_067.py``; every rank prints one TRACE line.
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
    """Combine `value` over all ranks (max)."""
    note("allgather:1")
    values = comm.allgather(value)
    if max(values) > 100:
        note("bcast:2")
        return comm.bcast(value, root=0)
    return sum(values)


def exchange_2(comm, value):
    """Combine `value` over all ranks (echo)."""
    rank = comm.Get_rank()
    if rank == 0:
        value = value + 1
    note("bcast:3")
    return comm.bcast(value, root=0)


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    items = list(range(rank % 3))
    flag = rank % 2 == 0
    acc += exchange_1(comm, len(items))
    if LIMIT > 2:
        acc += exchange_2(comm, int(flag))
        for j1 in range(rank + 1):
            acc -= 4
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
