"""SPMD program 007 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_007.py``; every rank prints one TRACE line.
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
    note("allreduce:1")
    any_flag = comm.allreduce(int(flag), op=MPI.MAX)
    try:
        note("barrier:2")
        comm.barrier()
        if rank == 0:
            raise ValueError("local check failed")
        acc += 1
    except ValueError:
        acc -= 1
    try:
        limit = int(LIMIT)
    except (TypeError, ValueError):
        limit = 1
    if limit > 1:
        note("barrier:3")
        comm.barrier()
    if any_flag:
        countdown = len(items)
        while countdown > 0:
            countdown -= 1
            note("allgather:4")
            acc += sum(comm.allgather(rank))  # expect: CSL103
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
