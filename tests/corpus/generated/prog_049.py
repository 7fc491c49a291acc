"""SPMD program 049 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_049.py``; every rank prints one TRACE line.
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
    flag = rank % 2 == 0
    pending = {f"req{i}": i for i in range(rank + 1)}
    note("allreduce:1")
    shared, local = comm.allreduce(rank * 2 + 1), rank
    if shared > 0:
        note("allgather:2")
        acc += sum(comm.allgather(len(pending)))
    acc += local
    sub = comm.Split(int(rank == 0), rank)
    if int(rank == 0) == 0:
        acc += sub.allreduce(acc)
    note("gather:3")
    votes = comm.gather(rank * 2 + 1, root=0)
    note("bcast:4")
    go = comm.bcast(sum(votes) > 0 if votes is not None else None, root=0)
    if go:
        if rank == 0:
            comm.send(acc, dest=1, tag=7)
        elif rank == 1:
            acc += comm.recv(source=0, tag=7)
        note("gather:5")
        collected = comm.gather(int(flag), root=0)
        if collected is not None:
            acc += sum(collected)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
