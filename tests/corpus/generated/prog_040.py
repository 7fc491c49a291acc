"""SPMD program 040 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_040.py``; every rank prints one TRACE line.
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
    pending = {f"req{i}": i for i in range(rank + 1)}
    note("allreduce:1")
    total = comm.allreduce(len(items))
    note("allgather:2")
    lengths = comm.allgather(len(items))
    if max(lengths) > 0:
        note("gather:3")
        collected = comm.gather(rank * 2 + 1, root=0)
        if collected is not None:
            acc += sum(collected)
        assert 0 <= rank < size, "rank out of range"
        note("barrier:4")
        comm.barrier()
    note("gather:5")
    votes = comm.gather(len(pending), root=0)
    note("bcast:6")
    go = comm.bcast(sum(votes) > 0 if votes is not None else None, root=0)
    if go:
        if not items:
            acc -= 1
    for u0 in range(total):
        if size > 1:
            who, backlog = local_status_1(comm, items)
            if backlog == 0:
                note("allreduce:7")
                acc += comm.allreduce(acc)  # expect: CSL101
    note("gather:8")
    collected = comm.gather(len(items), root=0)
    if collected is not None:
        acc += sum(collected)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
