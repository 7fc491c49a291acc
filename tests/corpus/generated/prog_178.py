"""SPMD program 178 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_178.py``; every rank prints one TRACE line.
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


def is_leader_1(comm):
    """Whether this process leads."""
    return comm.Get_rank() == 0


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    items = list(range(rank % 3))
    pending = {f"req{i}": i for i in range(rank + 1)}
    remaining = len(items)
    while note("allreduce:1") and comm.allreduce(remaining) > 0:
        if remaining > 0:
            remaining -= 1
            acc += 1
    if is_leader_1(comm):
        note("allgather:2")
        acc += sum(comm.allgather(1))  # expect: CSL101
    note("gather:3")
    votes = comm.gather(len(pending), root=0)
    note("bcast:4")
    go = comm.bcast(sum(votes) > 0 if votes is not None else None, root=0)
    if go:
        note("allreduce:5")
        shared, local = comm.allreduce(len(items)), rank * 2 + 1
        if shared > 0:
            note("allreduce:6")
            acc += comm.allreduce(rank)
        acc += local
        if rank == 0:
            comm.send(acc, dest=1, tag=7)
        elif rank == 1:
            acc += comm.recv(source=0, tag=7)
    note("allreduce:7")
    shared, local = comm.allreduce(len(items)), rank * 2 + 1
    if shared > 0:
        note("allreduce:8")
        acc += comm.allreduce(acc)
    acc += local
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
