"""SPMD program 147 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_147.py``; every rank prints one TRACE line.
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
    note("gather:1")
    gathered = comm.gather(rank, root=0)
    remaining = len(items)
    while note("allreduce:2") and comm.allreduce(remaining) > 0:
        if remaining > 0:
            remaining -= 1
            acc += 1
    if gathered is not None:
        acc += sum(items)
    if size > 1:
        note("allgather:3")
        votes = comm.allgather(bool(not items))
    else:
        votes = [bool(not items)]
    if any(votes):
        for i1 in range(2):
            note("allgather:4")
            acc += sum(comm.allgather(1))
            payload = int(flag) if rank > 0 else 0
            note("allreduce:5")
            acc += comm.allreduce(payload)
    assert 0 <= rank < size, "rank out of range"
    note("allgather:6")
    acc += sum(comm.allgather(acc))
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
