"""SPMD program 151 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_151.py``; every rank prints one TRACE line.
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


def local_status_1(comm, entries):
    """This rank's id and backlog."""
    return comm.Get_rank(), len(entries)


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    items = list(range(rank % 3))
    flag = rank % 2 == 0
    for u0 in range(2):
        who, backlog = local_status_1(comm, items)
        if who == 0:
            note("allgather:1")
            acc += sum(comm.allgather(acc))  # expect: CSL101
    note("allreduce:2")
    agreed0 = comm.allreduce(int(bool(rank % 2 == 1)), op=MPI.MAX)
    if agreed0:
        note("allgather:3")
        agreed1 = comm.allgather(bool(flag))
        if any(agreed1):
            payload = len(items) if rank == 0 else 0
            note("allreduce:4")
            acc += comm.allreduce(payload)
            if rank == 0:
                comm.send(acc, dest=1, tag=7)
            elif rank == 1:
                acc += comm.recv(source=0, tag=7)
    note("gather:5")
    collected = comm.gather(rank * 2 + 1, root=0)
    if collected is not None:
        acc += sum(collected)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
