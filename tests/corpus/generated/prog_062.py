"""SPMD program 062 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_062.py``; every rank prints one TRACE line.
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
    note("allreduce:1")
    total = comm.allreduce(len(items))
    note("gather:2")
    votes = comm.gather(int(flag), root=0)
    note("bcast:3")
    go = comm.bcast(sum(votes) > 0 if votes is not None else None, root=0)
    if go:
        note("gather:4")
        votes = comm.gather(int(flag), root=0)
        note("bcast:5")
        go = comm.bcast(sum(votes) > 0 if votes is not None else None, root=0)
        if go:
            acc -= 2
            if flag:
                acc = acc * 2 % 97
            else:
                acc = acc * 2 % 97
    for i0 in range(total):
        acc += sum(items)
        try:
            limit = int(LIMIT)
        except (TypeError, ValueError):
            limit = 1
        if limit > 1:
            note("allreduce:6")
            acc += comm.allreduce(len(pending))
    try:
        note("allreduce:7")
        acc += comm.allreduce(acc)
        if items:
            raise ValueError("local check failed")
        acc += 1
    except ValueError:
        acc -= 1
    if rank != 0:
        note("barrier:pair1")
        comm.barrier()
    acc += rank
    if rank == 0:
        note("barrier:pair1")
        comm.barrier()
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
