"""SPMD program 004 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_004.py``; every rank prints one TRACE line.
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
    payload = value if value > 0 else 0
    note("allreduce:1")
    return comm.allreduce(payload, op=MPI.MAX)


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    items = list(range(rank % 3))
    flag = rank % 2 == 0
    note("allreduce:2")
    any_flag = comm.allreduce(int(flag), op=MPI.MAX)
    if any_flag:
        for j1 in range(rank + 1):
            acc += int(flag)
        remaining = len(items)
        while note("allreduce:3") and comm.allreduce(remaining) > 0:
            if remaining > 0:
                remaining -= 1
                acc += 1
    acc += exchange_1(comm, int(flag))
    if size > 1:
        note("allgather:4")
        votes = comm.allgather(bool(rank % 2 == 1))
    else:
        votes = [bool(rank % 2 == 1)]
    if any(votes):
        if flag:
            acc = acc * 2 % 97
            note("bcast:pair1")
            acc += comm.bcast(int(flag), root=0)
        else:
            note("bcast:pair1")
            acc += comm.bcast(acc, root=0)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
