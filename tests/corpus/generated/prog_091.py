"""SPMD program 091 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_091.py``; every rank prints one TRACE line.
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
    note("allreduce:1")
    shared, local = comm.allreduce(int(flag)), len(items)
    if shared > 0:
        note("allgather:2")
        acc += sum(comm.allgather(acc))
    acc += local
    remaining = len(items)
    while note("allreduce:3") and comm.allreduce(remaining) > 0:
        if remaining > 0:
            remaining -= 1
            acc += 1
    note("gather:4")
    collected = comm.gather(len(pending), root=0)
    if collected is not None:
        acc += sum(collected)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
