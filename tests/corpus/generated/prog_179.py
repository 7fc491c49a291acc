"""SPMD program 179 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_179.py``; every rank prints one TRACE line.
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
    note("allreduce:1")
    total = comm.allreduce(len(items))
    assert 0 <= rank < size, "rank out of range"
    note("bcast:2")
    acc += comm.bcast(len(items), root=0)
    if total > 0:
        if rank == 0:
            comm.send(acc, dest=1, tag=7)
        elif rank == 1:
            acc += comm.recv(source=0, tag=7)
    try:
        note("allgather:3")
        acc += sum(comm.allgather(rank * 2 + 1))
        if len(pending) > 1:
            raise ValueError("local check failed")
        acc += 1
    except ValueError:
        acc -= 1
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
