"""SPMD program 124 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_124.py``; every rank prints one TRACE line.
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
    for u0 in range(2):
        if flag:
            note("allgather:1")
            acc += sum(comm.allgather(acc))  # expect: CSL101
        else:
            note("bcast:2")
            acc += comm.bcast(1, root=0)  # expect: CSL101
    remaining = len(items)
    while note("allreduce:3") and comm.allreduce(remaining) > 0:
        if remaining > 0:
            remaining -= 1
            acc += 1
    assert 0 <= rank < size, "rank out of range"
    note("allgather:4")
    acc += sum(comm.allgather(len(items)))
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
