"""SPMD program 001 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_001.py``; every rank prints one TRACE line.
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
    try:
        note("barrier:2")
        comm.barrier()
        if items:
            raise ValueError("local check failed")
        acc += 1
    except ValueError:
        acc -= 1
    acc += sum(items)
    note("gather:3")
    collected = comm.gather(len(items), root=0)
    if collected is not None:
        acc += sum(collected)
    if size > 1:
        for i1 in range(2):
            note("gather:4")
            collected = comm.gather(len(items), root=0)
            if collected is not None:
                acc += sum(collected)
            acc += exchange_1(comm, int(flag))
        if size > 1:
            note("allgather:5")
            votes = comm.allgather(bool(rank == 0))
        else:
            votes = [bool(rank == 0)]
        if any(votes):
            payload = len(items) if items else 0
            note("allreduce:6")
            acc += comm.allreduce(payload)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
