"""SPMD program 174 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_174.py``; every rank prints one TRACE line.
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
    acc += exchange_1(comm, len(items))
    if size > 1:
        note("allgather:2")
        votes = comm.allgather(bool(rank == size - 1))
    else:
        votes = [bool(rank == size - 1)]
    if any(votes):
        if rank != 0:
            note("barrier:pair1")
            comm.barrier()
        acc += sum(items)
        if rank == 0:
            note("barrier:pair1")
            comm.barrier()
    for i0 in range(size):
        acc += sum(items)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
