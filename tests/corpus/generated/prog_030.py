"""SPMD program 030 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_030.py``; every rank prints one TRACE line.
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
    pending = {f"req{i}": i for i in range(rank + 1)}
    for j0 in items:
        acc += sum(items)
    note("allreduce:1")
    acc += comm.allreduce(rank * 2 + 1)
    note("allreduce:2")
    shared, local = comm.allreduce(len(items)), len(pending)
    if shared > 0:
        note("barrier:3")
        comm.barrier()
    acc += local
    acc -= 1
    note("allreduce:4")
    shared, local = comm.allreduce(rank), len(items)
    if shared > 0:
        note("allreduce:5")
        acc += comm.allreduce(rank * 2 + 1)
    acc += local
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
