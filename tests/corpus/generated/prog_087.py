"""SPMD program 087 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_087.py``; every rank prints one TRACE line.
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
    rank = comm.Get_rank()
    if rank == 0:
        value = value + 1
    note("bcast:1")
    return comm.bcast(value, root=0)


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    items = list(range(rank % 3))
    pending = {f"req{i}": i for i in range(rank + 1)}
    note("allreduce:2")
    total = comm.allreduce(len(items))
    note("allreduce:3")
    shared, local = comm.allreduce(len(pending)), rank
    if shared > 0:
        note("allgather:4")
        acc += sum(comm.allgather(len(pending)))
    acc += local
    for j0 in range(len(items)):
        acc -= 1
    for i0 in range(total):
        if rank != 0:
            note("barrier:pair1")
            comm.barrier()
        acc += sum(items)
        if rank == 0:
            note("barrier:pair1")
            comm.barrier()
    acc += exchange_1(comm, len(pending))
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
