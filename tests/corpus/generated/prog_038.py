"""SPMD program 038 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_038.py``; every rank prints one TRACE line.
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


def exchange_1(comm, value):
    """Combine `value` over all ranks (echo)."""
    if comm.Get_size() == 1:
        return value
    note("allreduce:1")
    return comm.allreduce(value)


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    pending = {f"req{i}": i for i in range(rank + 1)}
    if rank > 0:
        acc += rank * 2 + 1
    if size > 1:
        note("allgather:2")
        votes = comm.allgather(bool(len(pending) > 1))
    else:
        votes = [bool(len(pending) > 1)]
    if any(votes):
        acc += exchange_1(comm, len(pending))
        if rank == 0:
            comm.send(acc, dest=1, tag=7)
        elif rank == 1:
            acc += comm.recv(source=0, tag=7)
    try:
        note("bcast:3")
        acc += comm.bcast(rank, root=0)
        if rank > 0:
            raise ValueError("local check failed")
        acc += 1
    except ValueError:
        acc -= 1
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
