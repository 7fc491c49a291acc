"""SPMD program 171 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_171.py``; every rank prints one TRACE line.
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
    """Combine `value` over all ranks (echo)."""
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
    sub = comm.Split(int(rank > 0), rank)
    if int(rank > 0) == 0:
        acc += sub.bcast(acc, root=0)
    for i0 in range(LIMIT):
        note("allreduce:2")
        agreed1 = comm.allreduce(int(bool(flag)), op=MPI.MAX)
        if agreed1:
            note("allgather:3")
            acc += sum(comm.allgather(int(flag)))
            if size > 5:
                break
            if rank == 0:
                comm.send(acc, dest=1, tag=7)
            elif rank == 1:
                acc += comm.recv(source=0, tag=7)
    for u0 in range(size):
        if flag:
            acc += exchange_1(comm, acc)  # expect: CSL101
    for j0 in pending:
        acc += sum(items)
    note("allgather:4")
    acc += sum(comm.allgather(int(flag)))
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
