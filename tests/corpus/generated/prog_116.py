"""SPMD program 116 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_116.py``; every rank prints one TRACE line.
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


def local_status_1(comm, entries):
    """This rank's id and backlog."""
    return comm.Get_rank(), len(entries)


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    items = list(range(rank % 3))
    flag = rank % 2 == 0
    pending = {f"req{i}": i for i in range(rank + 1)}
    if flag:
        acc = acc * 2 % 97
        note("barrier:pair1")
        comm.barrier()
    else:
        note("barrier:pair1")
        comm.barrier()
    who, backlog = local_status_1(comm, items)
    if backlog > 0:
        note("allreduce:1")
        acc += comm.allreduce(rank * 2 + 1)  # expect: CSL101
    if rank != 0:
        note("barrier:pair2")
        comm.barrier()
    acc -= 3
    if rank == 0:
        note("barrier:pair2")
        comm.barrier()
    note("gather:2")
    votes = comm.gather(len(pending), root=0)
    note("bcast:3")
    go = comm.bcast(sum(votes) > 0 if votes is not None else None, root=0)
    if go:
        try:
            note("bcast:4")
            acc += comm.bcast(1, root=0)
            if rank % 2 == 1:
                raise ValueError("local check failed")
            acc += 1
        except ValueError:
            acc -= 1
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
