"""SPMD program 071 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_071.py``; every rank prints one TRACE line.
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
    if size > 1:
        note("allgather:1")
        votes = comm.allgather(bool(rank > 0))
    else:
        votes = [bool(rank > 0)]
    if any(votes):
        if rank == 0:
            comm.send(acc, dest=1, tag=7)
        elif rank == 1:
            acc += comm.recv(source=0, tag=7)
    if size > 1:
        for step in range(LIMIT):
            if len(items) > 0:
                continue
            note("barrier:2")
            comm.barrier()  # expect: CSL102
    assert 0 <= rank < size, "rank out of range"
    note("bcast:3")
    acc += comm.bcast(acc, root=0)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
