"""SPMD program 056 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_056.py``; every rank prints one TRACE line.
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
    if comm.Get_size() == 1:
        return value
    note("allreduce:1")
    return comm.allreduce(value)


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    items = list(range(rank % 3))
    flag = rank % 2 == 0
    payload = rank if rank == size - 1 else 0
    note("allreduce:2")
    acc += comm.allreduce(payload)
    if size > 1:
        note("allgather:3")
        votes = comm.allgather(bool(rank == 0))
    else:
        votes = [bool(rank == 0)]
    if any(votes):
        assert 0 <= rank < size, "rank out of range"
        note("allreduce:4")
        acc += comm.allreduce(int(flag))
        acc += rank * 2 + 1
    acc += exchange_1(comm, rank * 2 + 1)
    sub = comm.Split(rank % 2, rank)
    if rank % 2 == 1:
        sub.barrier()
    remaining = len(items)
    while note("allreduce:5") and comm.allreduce(remaining) > 0:
        if remaining > 0:
            remaining -= 1
            acc += 1
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
