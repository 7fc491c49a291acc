"""SPMD program 016 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_016.py``; every rank prints one TRACE line.
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
    note("allreduce:1")
    total = comm.allreduce(len(items))
    if total > 0:
        if rank == size - 1:
            sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
            sys.exit(0)
        note("bcast:2")
        acc += comm.bcast(rank * 2 + 1, root=0)  # expect: CSL102
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
