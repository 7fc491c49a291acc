"""SPMD program 172 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_172.py``; every rank prints one TRACE line.
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
    note("allreduce:1")
    shared, local = comm.allreduce(rank * 2 + 1), len(items)
    if shared > 0:
        note("barrier:2")
        comm.barrier()
    acc += local
    for i0 in range(size):
        try:
            limit = int(LIMIT)
        except (TypeError, ValueError):
            limit = 1
        if limit > 1:
            note("allgather:3")
            acc += sum(comm.allgather(rank * 2 + 1))
    if rank == 0:
        comm.send(acc, dest=1, tag=7)
    elif rank == 1:
        acc += comm.recv(source=0, tag=7)
    if rank == 0:
        comm.send(acc, dest=1, tag=7)
    elif rank == 1:
        acc += comm.recv(source=0, tag=7)
    acc += sum(items)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
