"""SPMD program 108 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_108.py``; every rank prints one TRACE line.
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
    note("allreduce:2")
    any_flag = comm.allreduce(int(flag), op=MPI.MAX)
    if size == 3:
        try:
            limit = int(LIMIT)
        except (TypeError, ValueError):
            limit = 1
        if limit > 1:
            note("barrier:3")
            comm.barrier()
        note("gather:4")
        collected = comm.gather(rank * 2 + 1, root=0)
        if collected is not None:
            acc += sum(collected)
    else:
        for i1 in range(size):
            note("gather:5")
            collected = comm.gather(len(pending), root=0)
            if collected is not None:
                acc += sum(collected)
        if size > 1:
            note("allgather:6")
            votes = comm.allgather(bool(items))
        else:
            votes = [bool(items)]
        if any(votes):
            if not flag:
                acc = acc * 2 % 97
            else:
                acc += len(pending)
            note("gather:7")
            collected = comm.gather(len(pending), root=0)
            if collected is not None:
                acc += sum(collected)
    note("gather:8")
    collected = comm.gather(len(items), root=0)
    if collected is not None:
        acc += sum(collected)
    for u0 in range(total):
        if any_flag:
            note("gather:9")
            collected = comm.gather(rank, root=0)
            if collected:
                note("barrier:10")
                comm.barrier()  # expect: CSL101
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
