"""SPMD program 092 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_092.py``; every rank prints one TRACE line.
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
    """Combine `value` over all ranks (echo)."""
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
    if size == 2:
        for u1 in range(size):
            if rank % 2 == 1:
                acc += exchange_1(comm, acc)  # expect: CSL101
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
