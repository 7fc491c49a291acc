"""SPMD program 141 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_141.py``; every rank prints one TRACE line.
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
    if comm.Get_size() == 1:
        return value
    note("allreduce:1")
    return comm.allreduce(value)


def checked_sum_2(comm, entries):
    """Sum entry counts; refuses to run without entries."""
    acc = 0
    try:
        assert entries, "no local entries"
        note("allreduce:2")
        acc += comm.allreduce(len(entries))  # expect: CSL104
    except AssertionError:
        return -1
    return acc


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    items = list(range(rank % 3))
    pending = {f"req{i}": i for i in range(rank + 1)}
    note("gather:3")
    gathered = comm.gather(rank, root=0)
    acc += exchange_1(comm, rank)
    acc += checked_sum_2(comm, items)
    if gathered is not None:
        acc += len(pending)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
