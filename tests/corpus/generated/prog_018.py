"""SPMD program 018 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_018.py``; every rank prints one TRACE line.
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
    note("gather:1")
    gathered = comm.gather(rank, root=0)
    try:
        note("barrier:2")
        comm.barrier()
        if gathered is not None:
            raise ValueError("local check failed")
        acc += 1
    except ValueError:
        acc -= 1
    if len(pending) > 1:
        acc += sum(items)
        note("barrier:pair1")
        comm.barrier()
    else:
        note("barrier:pair1")
        comm.barrier()
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
