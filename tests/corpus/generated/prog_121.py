"""SPMD program 121 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_121.py``; every rank prints one TRACE line.
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
    pending = {f"req{i}": i for i in range(rank + 1)}
    try:
        note("barrier:1")
        comm.barrier()
        if rank % 2 == 1:
            raise ValueError("local check failed")
        acc += 1
    except ValueError:
        acc -= 1
    try:
        limit = int(LIMIT)
    except (TypeError, ValueError):
        limit = 1
    if limit > 1:
        note("barrier:2")
        comm.barrier()
    try:
        note("barrier:3")
        comm.barrier()
        if len(pending) > 1:
            raise ValueError("local check failed")
        acc += 1
    except ValueError:
        acc -= 1
    payload = len(items) if rank > 0 else 0
    note("allreduce:4")
    acc += comm.allreduce(payload)
    assert 0 <= rank < size, "rank out of range"
    note("allgather:5")
    acc += sum(comm.allgather(int(flag)))
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
