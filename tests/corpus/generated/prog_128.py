"""SPMD program 128 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_128.py``; every rank prints one TRACE line.
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
    for j0 in pending:
        acc += sum(items)
    if rank == 0:
        comm.send(acc, dest=1, tag=7)
    elif rank == 1:
        acc += comm.recv(source=0, tag=7)
    payload = rank if len(items) > 0 else 0
    note("allreduce:1")
    acc += comm.allreduce(payload)
    acc -= 3
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
