"""SPMD program 019 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_019.py``; every rank prints one TRACE line.
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
    if size > 1:
        note("allgather:1")
        votes = comm.allgather(bool(items))
    else:
        votes = [bool(items)]
    if any(votes):
        note("allreduce:2")
        agreed1 = comm.allreduce(int(bool(items)), op=MPI.MAX)
        if agreed1:
            note("gather:3")
            collected = comm.gather(len(items), root=0)
            if collected is not None:
                acc += sum(collected)
        sub = comm.Split(rank % 2, rank)
        if rank % 2 == 1:
            acc += sub.bcast(acc, root=0)
    for u0 in range(2):
        for step in range(LIMIT):
            if len(pending) > 1:
                break
            note("allreduce:4")
            acc += comm.allreduce(len(pending))  # expect: CSL102
    assert 0 <= rank < size, "rank out of range"
    note("bcast:5")
    acc += comm.bcast(rank, root=0)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
