"""SPMD program 164 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_164.py``; every rank prints one TRACE line.
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
    note("allreduce:1")
    agreed0 = comm.allreduce(int(bool(not items)), op=MPI.MAX)
    if agreed0:
        note("allgather:2")
        agreed1 = comm.allgather(bool(items))
        if any(agreed1):
            if rank == 0:
                comm.send(acc, dest=1, tag=7)
            elif rank == 1:
                acc += comm.recv(source=0, tag=7)
        note("gather:3")
        votes = comm.gather(len(items), root=0)
        note("bcast:4")
        go = comm.bcast(sum(votes) > 0 if votes is not None else None, root=0)
        if go:
            if len(items) > 0:
                acc -= 4
                note("allreduce:pair1")
                acc += comm.allreduce(len(items))
            else:
                note("allreduce:pair1")
                acc += comm.allreduce(len(pending))
    if len(items) > 0:
        acc = acc * 2 % 97
        note("allreduce:pair2")
        acc += comm.allreduce(1)
    else:
        note("allreduce:pair2")
        acc += comm.allreduce(len(items))
    for u0 in range(LIMIT):
        for u1 in range(LIMIT):
            try:
                if rank == size - 1:
                    raise ValueError("local input rejected")
                note("barrier:5")
                comm.barrier()  # expect: CSL104
            except ValueError:
                acc -= 1
    if rank != 0:
        note("barrier:pair3")
        comm.barrier()
    acc += len(pending)
    if rank == 0:
        note("barrier:pair3")
        comm.barrier()
    remaining = len(items)
    while note("allreduce:6") and comm.allreduce(remaining) > 0:
        if remaining > 0:
            remaining -= 1
            acc += 1
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
