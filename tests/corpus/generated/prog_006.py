"""SPMD program 006 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_006.py``; every rank prints one TRACE line.
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
    pending = {f"req{i}": i for i in range(rank + 1)}
    payload = len(pending) if len(pending) > 1 else 0
    note("allreduce:1")
    acc += comm.allreduce(payload)
    if size == 3:
        note("gather:2")
        collected = comm.gather(len(pending), root=0)
        if collected:
            note("bcast:3")
            acc += comm.bcast(rank * 2 + 1, root=0)  # expect: CSL101
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
