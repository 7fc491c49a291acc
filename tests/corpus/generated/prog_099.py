"""SPMD program 099 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_099.py``; every rank prints one TRACE line.
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
    for i0 in range(LIMIT):
        payload = rank * 2 + 1 if not items else 0
        note("allreduce:1")
        acc += comm.allreduce(payload)
        assert 0 <= rank < size, "rank out of range"
        note("barrier:2")
        comm.barrier()
    for i0 in range(size):
        note("allreduce:3")
        shared, local = comm.allreduce(rank * 2 + 1), rank * 2 + 1
        if shared > 0:
            note("bcast:4")
            acc += comm.bcast(int(flag), root=0)
        acc += local
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
