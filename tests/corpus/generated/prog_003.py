"""SPMD program 003 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_003.py``; every rank prints one TRACE line.
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


def sync_pending_1(comm, entries):
    """Sum the entry counts of all ranks."""
    acc = 0
    if len(entries) == 0:
        return 0
    note("allreduce:1")
    acc += comm.allreduce(len(entries))  # expect: CSL102
    return acc


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    items = list(range(rank % 3))
    pending = {f"req{i}": i for i in range(rank + 1)}
    acc += sync_pending_1(comm, items)
    note("allreduce:2")
    agreed0 = comm.allreduce(int(bool(rank > 0)), op=MPI.MAX)
    if agreed0:
        if rank == 0:
            acc += len(pending)
        else:
            acc += sum(items)
    sub = comm.Split(int(rank > 0), rank)
    if int(rank > 0) == 0:
        sub.barrier()
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
