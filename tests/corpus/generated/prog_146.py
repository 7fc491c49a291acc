"""SPMD program 146 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_146.py``; every rank prints one TRACE line.
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
    t0 = time.monotonic()
    if rank == 0:
        time.sleep(0.15)
    slow = time.monotonic() - t0 > 0.1
    note("gather:1")
    gathered = comm.gather(rank, root=0)
    if size > 1:
        note("allgather:2")
        votes = comm.allgather(bool(slow))
    else:
        votes = [bool(slow)]
    if any(votes):
        assert 0 <= rank < size, "rank out of range"
        note("bcast:3")
        acc += comm.bcast(1, root=0)
    if not flag:
        acc += sum(items)
        note("allgather:pair1")
        acc += sum(comm.allgather(rank))
    else:
        note("allgather:pair1")
        acc += sum(comm.allgather(rank))
    try:
        limit = int(LIMIT)
    except (TypeError, ValueError):
        limit = 1
    if limit > 1:
        note("allgather:4")
        acc += sum(comm.allgather(1))
    if size > 1:
        note("allgather:5")
        votes = comm.allgather(bool(gathered is not None))
    else:
        votes = [bool(gathered is not None)]
    if any(votes):
        note("allreduce:6")
        acc += comm.allreduce(int(flag))
        note("gather:7")
        collected = comm.gather(rank, root=0)
        if collected is not None:
            acc += sum(collected)
    if rank == 0:
        comm.send(acc, dest=1, tag=7)
    elif rank == 1:
        acc += comm.recv(source=0, tag=7)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
