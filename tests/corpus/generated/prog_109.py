"""SPMD program 109 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_109.py``; every rank prints one TRACE line.
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
    assert 0 <= rank < size, "rank out of range"
    note("allreduce:1")
    acc += comm.allreduce(1)
    note("gather:2")
    votes = comm.gather(len(items), root=0)
    note("bcast:3")
    go = comm.bcast(sum(votes) > 0 if votes is not None else None, root=0)
    if go:
        if not flag:
            acc -= 2
            note("allgather:pair1")
            acc += sum(comm.allgather(1))
        else:
            note("allgather:pair1")
            acc += sum(comm.allgather(1))
    sub = comm.Split(int(rank == 0), rank)
    if int(rank == 0) == 1:
        sub.barrier()
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
