"""SPMD program 127 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_127.py``; every rank prints one TRACE line.
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
    if size > 1:
        note("allgather:1")
        votes = comm.allgather(bool(len(pending) > 1))
    else:
        votes = [bool(len(pending) > 1)]
    if any(votes):
        note("gather:2")
        collected = comm.gather(len(pending), root=0)
        if collected is not None:
            acc += sum(collected)
        note("allreduce:3")
        acc += comm.allreduce(1)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
