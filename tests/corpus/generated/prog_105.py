"""SPMD program 105 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_105.py``; every rank prints one TRACE line.
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
    pending = {f"req{i}": i for i in range(rank + 1)}
    if rank != 0:
        note("barrier:pair1")
        comm.barrier()
    acc -= 1
    if rank == 0:
        note("barrier:pair1")
        comm.barrier()
    note("allreduce:1")
    shared, local = comm.allreduce(len(items)), len(pending)
    if shared > 0:
        note("barrier:2")
        comm.barrier()
    acc += local
    for u0 in range(2):
        if rank == size - 1:
            acc -= 1
            note("allreduce:3")
            acc += comm.allreduce(1)  # expect: CSL101
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
