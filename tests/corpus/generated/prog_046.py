"""SPMD program 046 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_046.py``; every rank prints one TRACE line.
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
    acc = acc * 2 % 97
    if len(items) > 0:
        sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
        sys.exit(0)
    note("barrier:1")
    comm.barrier()  # expect: CSL102
    try:
        note("allreduce:2")
        acc += comm.allreduce(acc)
        if rank == size - 1:
            raise ValueError("local check failed")
        acc += 1
    except ValueError:
        acc -= 1
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
