"""SPMD program 022 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_022.py``; every rank prints one TRACE line.
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
    if size == 3:
        if total > 0:
            if rank == size - 1:
                note("allreduce:2")
                acc += comm.allreduce(rank)  # expect: CSL101
            else:
                note("barrier:3")
                comm.barrier()  # expect: CSL101
    remaining = len(items)
    while note("allreduce:4") and comm.allreduce(remaining) > 0:
        if remaining > 0:
            remaining -= 1
            acc += 1
    note("barrier:5")
    comm.barrier()
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
