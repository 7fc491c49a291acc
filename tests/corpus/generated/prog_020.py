"""SPMD program 020 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_020.py``; every rank prints one TRACE line.
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
    pending = {f"req{i}": i for i in range(rank + 1)}
    note("allreduce:1")
    total = comm.allreduce(len(items))
    if size > 1:
        note("allgather:2")
        votes = comm.allgather(bool(rank == size - 1))
    else:
        votes = [bool(rank == size - 1)]
    if any(votes):
        if total > 0:
            acc = acc * 2 % 97
    if rank > 0:
        acc -= 3
    else:
        acc += rank
    for j0 in range(len(items)):
        acc -= 1
    note("allreduce:3")
    shared, local = comm.allreduce(rank * 2 + 1), len(pending)
    if shared > 0:
        note("bcast:4")
        acc += comm.bcast(rank, root=0)
    acc += local
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
