"""SPMD program 111 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_111.py``; every rank prints one TRACE line.
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
    note("allgather:1")
    values = comm.allgather(value)
    if max(values) > 100:
        note("bcast:2")
        return comm.bcast(value, root=0)
    return sum(values)


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    items = list(range(rank % 3))
    flag = rank % 2 == 0
    t0 = time.monotonic()
    if rank == 0:
        time.sleep(0.15)
    slow = time.monotonic() - t0 > 0.1
    note("allreduce:3")
    total = comm.allreduce(len(items))
    acc += sum(items)
    for i0 in range(total):
        note("allgather:4")
        agreed1 = comm.allgather(bool(not flag))
        if any(agreed1):
            acc += exchange_1(comm, len(items))
        payload = len(items) if slow else 0
        note("allreduce:5")
        acc += comm.allreduce(payload)
    if size % 2 == 1:
        if not items:
            acc += sum(items)
        else:
            acc = acc * 2 % 97
    else:
        note("allreduce:6")
        shared, local = comm.allreduce(rank), int(flag)
        if shared > 0:
            note("bcast:7")
            acc += comm.bcast(acc, root=0)
        acc += local
        if not flag:
            acc = acc * 2 % 97
            note("allreduce:pair1")
            acc += comm.allreduce(len(items))
        else:
            note("allreduce:pair1")
            acc += comm.allreduce(rank)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
