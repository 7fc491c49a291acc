"""SPMD program 012 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_012.py``; every rank prints one TRACE line.
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
    pending = {f"req{i}": i for i in range(rank + 1)}
    note("bcast:2")
    root_len = comm.bcast(len(items), root=0)
    if size == 2:
        assert 0 <= rank < size, "rank out of range"
        note("barrier:3")
        comm.barrier()
        if rank == 0:
            comm.send(acc, dest=1, tag=7)
        elif rank == 1:
            acc += comm.recv(source=0, tag=7)
    else:
        sub = comm.Split(int(rank == 0), rank)
        if int(rank == 0) == 1:
            acc += sub.allreduce(acc)
        if LIMIT > 2:
            acc += sum(items)
            payload = rank if rank == size - 1 else 0
            note("allreduce:4")
            acc += comm.allreduce(payload)
    try:
        limit = int(LIMIT)
    except (TypeError, ValueError):
        limit = 1
    if limit > 1:
        note("allgather:5")
        acc += sum(comm.allgather(1))
    if root_len == 0:
        if rank == size - 1:
            acc += exchange_1(comm, acc)  # expect: CSL101
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
