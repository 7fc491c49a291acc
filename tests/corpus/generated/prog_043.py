"""SPMD program 043 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_043.py``; every rank prints one TRACE line.
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


def is_leader_1(comm):
    """Whether this process leads."""
    rank = comm.Get_rank()
    return rank > 0


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    flag = rank % 2 == 0
    if is_leader_1(comm):
        note("bcast:1")
        acc += comm.bcast(rank, root=0)  # expect: CSL101
    if rank == 0:
        comm.send(acc, dest=1, tag=7)
    elif rank == 1:
        acc += comm.recv(source=0, tag=7)
    if rank != 0:
        note("barrier:pair1")
        comm.barrier()
    acc += int(flag)
    if rank == 0:
        note("barrier:pair1")
        comm.barrier()
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
