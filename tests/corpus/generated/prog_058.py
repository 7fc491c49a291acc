"""SPMD program 058 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_058.py``; every rank prints one TRACE line.
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


def exchange_2(comm, value):
    """Combine `value` over all ranks (sum)."""
    note("allgather:2")
    values = comm.allgather(value)
    if max(values) > 100:
        note("bcast:3")
        return comm.bcast(value, root=0)
    return sum(values)


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    items = list(range(rank % 3))
    flag = rank % 2 == 0
    note("gather:4")
    gathered = comm.gather(rank, root=0)
    note("allreduce:5")
    total = comm.allreduce(len(items))
    if size > 1:
        note("allgather:6")
        votes = comm.allgather(bool(items))
    else:
        votes = [bool(items)]
    if any(votes):
        assert 0 <= rank < size, "rank out of range"
        note("bcast:7")
        acc += comm.bcast(rank, root=0)
        note("allgather:8")
        agreed1 = comm.allgather(bool(gathered is not None))
        if any(agreed1):
            note("gather:9")
            collected = comm.gather(len(items), root=0)
            if collected is not None:
                acc += sum(collected)
    acc += exchange_1(comm, int(flag))
    note("allreduce:10")
    shared, local = comm.allreduce(int(flag)), int(flag)
    if shared > 0:
        note("bcast:11")
        acc += comm.bcast(acc, root=0)
    acc += local
    if total > 0:
        acc += exchange_2(comm, rank * 2 + 1)
        for j1 in items:
            acc += sum(items)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
