"""SPMD program 107 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_107.py``; every rank prints one TRACE line.
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
    sub = comm.Split(int(rank == 0), rank)
    if int(rank == 0) == 0:
        acc += sub.bcast(acc, root=0)
    acc -= 3
    note("allreduce:1")
    shared, local = comm.allreduce(len(items)), int(flag)
    if shared > 0:
        note("allreduce:2")
        acc += comm.allreduce(rank * 2 + 1)
    acc += local
    payload = rank if flag else 0
    note("allreduce:3")
    acc += comm.allreduce(payload)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
