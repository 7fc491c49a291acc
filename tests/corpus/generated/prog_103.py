"""SPMD program 103 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_103.py``; every rank prints one TRACE line.
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
    """Combine `value` over all ranks (sum)."""
    rank = comm.Get_rank()
    if rank == 0:
        value = value + 1
    note("bcast:1")
    return comm.bcast(value, root=0)


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    items = list(range(rank % 3))
    flag = rank % 2 == 0
    pending = {f"req{i}": i for i in range(rank + 1)}
    t0 = time.monotonic()
    if rank == 0:
        time.sleep(0.15)
    slow = time.monotonic() - t0 > 0.1
    if slow:
        acc = acc * 2 % 97
        note("bcast:pair1")
        acc += comm.bcast(len(items), root=0)
    else:
        note("bcast:pair1")
        acc += comm.bcast(len(items), root=0)
    note("gather:2")
    votes = comm.gather(int(flag), root=0)
    note("bcast:3")
    go = comm.bcast(sum(votes) > 0 if votes is not None else None, root=0)
    if go:
        acc += exchange_1(comm, len(pending))
        acc -= 2
    sub = comm.Split(rank % 2, rank)
    if rank % 2 == 1:
        acc += sub.bcast(acc, root=0)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
