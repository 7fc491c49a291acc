"""SPMD program 047 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_047.py``; every rank prints one TRACE line.
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
    try:
        note("allgather:1")
        acc += sum(comm.allgather(rank * 2 + 1))
        if len(items) > 0:
            raise ValueError("local check failed")
        acc += 1
    except ValueError:
        acc -= 1
    note("gather:2")
    collected = comm.gather(len(pending), root=0)
    if collected is not None:
        acc += sum(collected)
    for u0 in range(size):
        sub = comm.Split(rank % 2, rank)
        if rank == 0:
            sub.barrier()  # expect: CSL101
    note("gather:3")
    collected = comm.gather(len(pending), root=0)
    if collected is not None:
        acc += sum(collected)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
