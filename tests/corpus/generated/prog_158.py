"""SPMD program 158 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_158.py``; every rank prints one TRACE line.
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


def validate_1(entries):
    """Reject an empty local backlog."""
    if not entries:
        raise ValueError("empty backlog")
    return len(entries)


def exchange_2(comm, value):
    """Combine `value` over all ranks (sum)."""
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
    items = list(range(rank % 3))
    pending = {f"req{i}": i for i in range(rank + 1)}
    for u0 in range(LIMIT):
        try:
            acc += validate_1(items)
            note("bcast:2")
            acc += comm.bcast(rank * 2 + 1, root=0)  # expect: CSL104
        except ValueError:
            acc -= 1
    if rank != 0:
        note("barrier:pair1")
        comm.barrier()
    acc += sum(items)
    if rank == 0:
        note("barrier:pair1")
        comm.barrier()
    acc += exchange_2(comm, len(pending))
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
