"""SPMD program 065 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_065.py``; every rank prints one TRACE line.
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
    payload = value if value > 0 else 0
    note("allreduce:1")
    return comm.allreduce(payload, op=MPI.MAX)


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    items = list(range(rank % 3))
    acc += exchange_1(comm, len(items))
    if len(items) > 0:
        acc -= 4
    else:
        acc += sum(items)
    try:
        limit = int(LIMIT)
    except (TypeError, ValueError):
        limit = 1
    if limit > 1:
        note("bcast:2")
        acc += comm.bcast(rank * 2 + 1, root=0)
    note("bcast:3")
    acc += comm.bcast(rank, root=0)
    if rank != 0:
        note("barrier:pair1")
        comm.barrier()
    acc += sum(items)
    if rank == 0:
        note("barrier:pair1")
        comm.barrier()
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
