"""SPMD program 033 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_033.py``; every rank prints one TRACE line.
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
    note("allreduce:1")
    acc += comm.allreduce(1)
    note("allreduce:2")
    shared, local = comm.allreduce(rank), rank
    if shared > 0:
        note("bcast:3")
        acc += comm.bcast(1, root=0)
    acc += local
    if size > 1:
        note("allgather:4")
        votes = comm.allgather(bool(not flag))
    else:
        votes = [bool(not flag)]
    if any(votes):
        try:
            note("allgather:5")
            acc += sum(comm.allgather(1))
            if rank == 0:
                raise ValueError("local check failed")
            acc += 1
        except ValueError:
            acc -= 1
        if rank == 0:
            comm.send(acc, dest=1, tag=7)
        elif rank == 1:
            acc += comm.recv(source=0, tag=7)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
