"""SPMD program 157 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_157.py``; every rank prints one TRACE line.
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


def sync_pending_1(comm, entries):
    """Sum the entry counts of all ranks."""
    acc = 0
    if len(entries) == 0:
        return 0
    note("allgather:1")
    acc += sum(comm.allgather(len(entries)))  # expect: CSL102
    return acc


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    items = list(range(rank % 3))
    flag = rank % 2 == 0
    pending = {f"req{i}": i for i in range(rank + 1)}
    note("allreduce:2")
    any_flag = comm.allreduce(int(flag), op=MPI.MAX)
    if rank != 0:
        note("barrier:pair1")
        comm.barrier()
    acc += len(items)
    if rank == 0:
        note("barrier:pair1")
        comm.barrier()
    if size % 2 == 1:
        if rank == 0:
            comm.send(acc, dest=1, tag=7)
        elif rank == 1:
            acc += comm.recv(source=0, tag=7)
    else:
        for i1 in range(LIMIT):
            payload = len(items) if len(pending) > 1 else 0
            note("allreduce:3")
            acc += comm.allreduce(payload)
        note("allgather:4")
        agreed1 = comm.allgather(bool(rank % 2 == 1))
        if any(agreed1):
            note("bcast:5")
            acc += comm.bcast(1, root=0)
            if rank % 2 == 1:
                acc = acc * 2 % 97
                note("barrier:pair2")
                comm.barrier()
            else:
                note("barrier:pair2")
                comm.barrier()
    if size == 2:
        if any_flag:
            acc += sync_pending_1(comm, items)
    if rank % 2 == 1:
        acc += sum(items)
    note("allgather:6")
    agreed0 = comm.allgather(bool(flag))
    if any(agreed0):
        sub = comm.Split(int(rank == 0), rank)
        if int(rank == 0) == 1:
            acc += sub.bcast(acc, root=0)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
