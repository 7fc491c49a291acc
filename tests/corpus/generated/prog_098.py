"""SPMD program 098 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_098.py``; every rank prints one TRACE line.
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
    any_flag = comm.allreduce(int(flag), op=MPI.MAX)
    assert 0 <= rank < size, "rank out of range"
    note("allgather:2")
    acc += sum(comm.allgather(rank))
    if rank == 0:
        comm.send(acc, dest=1, tag=7)
    elif rank == 1:
        acc += comm.recv(source=0, tag=7)
    if any_flag:
        if (len(pending) > 1) and (note("allreduce:3") and comm.allreduce(acc) > 0):  # expect: CSL101
            acc += 1
    if len(pending) > 1:
        acc += rank * 2 + 1
        note("bcast:pair1")
        acc += comm.bcast(acc, root=0)
    else:
        note("bcast:pair1")
        acc += comm.bcast(len(pending), root=0)
    note("gather:4")
    votes = comm.gather(rank, root=0)
    note("bcast:5")
    go = comm.bcast(sum(votes) > 0 if votes is not None else None, root=0)
    if go:
        remaining = len(items)
        while note("allreduce:6") and comm.allreduce(remaining) > 0:
            if remaining > 0:
                remaining -= 1
                acc += 1
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
