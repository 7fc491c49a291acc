"""SPMD program 167 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_167.py``; every rank prints one TRACE line.
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
    flag = rank % 2 == 0
    sub = comm.Split(int(rank > 0), rank)
    if int(rank > 0) == 0:
        acc += sub.bcast(acc, root=0)
    if rank % 2 == 1:
        return
    note("allgather:1")
    acc += sum(comm.allgather(int(flag)))  # expect: CSL102
    assert 0 <= rank < size, "rank out of range"
    note("barrier:2")
    comm.barrier()
    try:
        limit = int(LIMIT)
    except (TypeError, ValueError):
        limit = 1
    if limit > 1:
        note("allgather:3")
        acc += sum(comm.allgather(1))
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
