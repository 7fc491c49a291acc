"""SPMD program 041 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_041.py``; every rank prints one TRACE line.
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
    for i0 in range(size):
        note("gather:1")
        collected = comm.gather(len(items), root=0)
        if collected is not None:
            acc += sum(collected)
    try:
        if rank % 2 == 1:
            raise ValueError("local input rejected")
        note("bcast:2")
        acc += comm.bcast(rank * 2 + 1, root=0)  # expect: CSL104
    except ValueError:
        acc -= 1
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
