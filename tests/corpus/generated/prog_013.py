"""SPMD program 013 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_013.py``; every rank prints one TRACE line.
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
    note("gather:1")
    gathered = comm.gather(rank, root=0)
    payload = rank if not items else 0
    note("allreduce:2")
    acc += comm.allreduce(payload)
    if size > 1:
        note("allgather:3")
        votes = comm.allgather(bool(rank == size - 1))
    else:
        votes = [bool(rank == size - 1)]
    if any(votes):
        for i1 in range(LIMIT):
            note("bcast:4")
            acc += comm.bcast(len(pending), root=0)
            if LIMIT < 0:
                break
        for i1 in range(2):
            if not flag:
                acc += len(items)
                note("allreduce:pair1")
                acc += comm.allreduce(rank)
            else:
                note("allreduce:pair1")
                acc += comm.allreduce(1)
            if rank == 0:
                comm.send(acc, dest=1, tag=7)
            elif rank == 1:
                acc += comm.recv(source=0, tag=7)
    sub = comm.Split(rank % 2, rank)
    if rank % 2 == 1:
        sub.barrier()
    if size > 1:
        note("allgather:5")
        votes = comm.allgather(bool(gathered is not None))
    else:
        votes = [bool(gathered is not None)]
    if any(votes):
        acc += len(items)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
