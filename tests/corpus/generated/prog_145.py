"""SPMD program 145 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_145.py``; every rank prints one TRACE line.
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
    note("allreduce:1")
    total = comm.allreduce(len(items))
    for u0 in range(total):
        for u1 in range(2):
            for step in range(total):
                if len(items) > 0:
                    continue
                note("barrier:2")
                comm.barrier()  # expect: CSL102
    note("allreduce:3")
    shared, local = comm.allreduce(rank * 2 + 1), len(items)
    if shared > 0:
        note("bcast:4")
        acc += comm.bcast(int(flag), root=0)
    acc += local
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
