"""SPMD program 085 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_085.py``; every rank prints one TRACE line.
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
    payload = value if value > 0 else 0
    note("allreduce:1")
    return comm.allreduce(payload, op=MPI.MAX)


def exchange_2(comm, value):
    """Combine `value` over all ranks (sum)."""
    if comm.Get_size() == 1:
        return value
    note("allreduce:2")
    return comm.allreduce(value)


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    items = list(range(rank % 3))
    pending = {f"req{i}": i for i in range(rank + 1)}
    note("allreduce:3")
    total = comm.allreduce(len(items))
    acc += exchange_1(comm, len(pending))
    for u0 in range(total):
        if rank == size - 1:
            acc += exchange_2(comm, acc)  # expect: CSL101
    sub = comm.Split(int(rank > 0), rank)
    if int(rank > 0) == 1:
        sub.barrier()
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
