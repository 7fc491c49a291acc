"""SPMD program 094 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_094.py``; every rank prints one TRACE line.
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
    """Combine `value` over all ranks (max)."""
    note("allgather:1")
    values = comm.allgather(value)
    if max(values) > 100:
        note("bcast:2")
        return comm.bcast(value, root=0)
    return sum(values)


def exchange_2(comm, value):
    """Combine `value` over all ranks (echo)."""
    rank = comm.Get_rank()
    if rank == 0:
        value = value + 1
    note("bcast:3")
    return comm.bcast(value, root=0)


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    items = list(range(rank % 3))
    pending = {f"req{i}": i for i in range(rank + 1)}
    t0 = time.monotonic()
    if rank == 0:
        time.sleep(0.15)
    slow = time.monotonic() - t0 > 0.1
    note("allreduce:4")
    total = comm.allreduce(len(items))
    note("allreduce:5")
    acc += comm.allreduce(len(pending))
    if rank == size - 1:
        acc += sum(items)
    else:
        acc -= 2
    for i0 in range(LIMIT):
        remaining = len(items)
        while note("allreduce:6") and comm.allreduce(remaining) > 0:
            if remaining > 0:
                remaining -= 1
                acc += 1
        if rank == 0:
            acc = acc * 2 % 97
        else:
            acc += sum(items)
    note("allgather:7")
    agreed0 = comm.allgather(bool(len(pending) > 1))
    if any(agreed0):
        for i1 in range(total):
            acc += exchange_1(comm, rank * 2 + 1)
        if size % 2 == 1:
            if rank == 0:
                comm.send(acc, dest=1, tag=7)
            elif rank == 1:
                acc += comm.recv(source=0, tag=7)
            acc += exchange_2(comm, rank * 2 + 1)
        else:
            payload = len(items) if len(items) > 0 else 0
            note("allreduce:8")
            acc += comm.allreduce(payload)
            if slow:
                acc -= 1
            else:
                acc = acc * 2 % 97
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
