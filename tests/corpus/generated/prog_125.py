"""SPMD program 125 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_125.py``; every rank prints one TRACE line.
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
    acc -= 2
    if rank == size - 1:
        acc -= 1
        note("bcast:pair1")
        acc += comm.bcast(acc, root=0)
    else:
        note("bcast:pair1")
        acc += comm.bcast(int(flag), root=0)
    for step in range(LIMIT):
        if not flag:
            continue
        note("bcast:1")
        acc += comm.bcast(1, root=0)  # expect: CSL102
    assert 0 <= rank < size, "rank out of range"
    note("allgather:2")
    acc += sum(comm.allgather(acc))
    if not items:
        acc -= 2
        note("bcast:pair2")
        acc += comm.bcast(1, root=0)
    else:
        note("bcast:pair2")
        acc += comm.bcast(rank, root=0)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
