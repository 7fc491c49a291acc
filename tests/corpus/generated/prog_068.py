"""SPMD program 068 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_068.py``; every rank prints one TRACE line.
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
    assert 0 <= rank < size, "rank out of range"
    note("allreduce:1")
    acc += comm.allreduce(len(pending))
    note("gather:2")
    collected = comm.gather(len(items), root=0)
    if collected:
        note("allreduce:3")
        acc += comm.allreduce(rank * 2 + 1)  # expect: CSL101
    note("allreduce:4")
    acc += comm.allreduce(len(items))
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
