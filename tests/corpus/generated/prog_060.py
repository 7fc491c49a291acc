"""SPMD program 060 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_060.py``; every rank prints one TRACE line.
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
    if size > 1:
        note("allgather:1")
        votes = comm.allgather(bool(not items))
    else:
        votes = [bool(not items)]
    if any(votes):
        if rank == 0:
            comm.send(acc, dest=1, tag=7)
        elif rank == 1:
            acc += comm.recv(source=0, tag=7)
        if rank == 0:
            comm.send(acc, dest=1, tag=7)
        elif rank == 1:
            acc += comm.recv(source=0, tag=7)
    if not flag:
        acc = acc * 2 % 97
        note("allgather:pair1")
        acc += sum(comm.allgather(1))
    else:
        note("allgather:pair1")
        acc += sum(comm.allgather(int(flag)))
    note("allreduce:2")
    shared, local = comm.allreduce(rank * 2 + 1), len(pending)
    if shared > 0:
        note("bcast:3")
        acc += comm.bcast(rank, root=0)
    acc += local
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
