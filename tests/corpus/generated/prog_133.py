"""SPMD program 133 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_133.py``; every rank prints one TRACE line.
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
    remaining = len(items)
    while note("allreduce:1") and comm.allreduce(remaining) > 0:
        if remaining > 0:
            remaining -= 1
            acc += 1
    note("gather:2")
    votes = comm.gather(len(pending), root=0)
    note("bcast:3")
    go = comm.bcast(sum(votes) > 0 if votes is not None else None, root=0)
    if go:
        if rank != 0:
            note("barrier:pair1")
            comm.barrier()
        acc = acc * 2 % 97
        if rank == 0:
            note("barrier:pair1")
            comm.barrier()
        for j1 in range(len(items)):
            acc += len(pending)
    launch_rank = int(os.environ.get("PMI_RANK", "0"))
    if launch_rank % 2 == 1:
        note("bcast:4")
        acc += comm.bcast(rank, root=0)  # expect: CSL101
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
