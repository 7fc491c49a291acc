"""SPMD program 032 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_032.py``; every rank prints one TRACE line.
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
    pending = {f"req{i}": i for i in range(rank + 1)}
    acc = acc * 2 % 97
    if rank == size - 1:
        return
    note("allgather:1")
    acc += sum(comm.allgather(int(flag)))  # expect: CSL102
    payload = int(flag) if items else 0
    note("allreduce:2")
    acc += comm.allreduce(payload)
    note("allgather:3")
    agreed0 = comm.allgather(bool(items))
    if any(agreed0):
        for i1 in range(2):
            acc += len(pending)
        note("gather:4")
        collected = comm.gather(rank, root=0)
        if collected is not None:
            acc += sum(collected)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
