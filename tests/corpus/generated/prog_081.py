"""SPMD program 081 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_081.py``; every rank prints one TRACE line.
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
    if comm.Get_size() == 1:
        return value
    note("allreduce:1")
    return comm.allreduce(value)


def refresh_2(comm, value):
    """Refresh the shared value (wraps a collective helper)."""
    return exchange_1(comm, value) + 1


def exchange_3(comm, value):
    """Combine `value` over all ranks (sum)."""
    payload = value if value > 0 else 0
    note("allreduce:2")
    return comm.allreduce(payload, op=MPI.MAX)


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    items = list(range(rank % 3))
    flag = rank % 2 == 0
    pending = {f"req{i}": i for i in range(rank + 1)}
    note("allreduce:3")
    total = comm.allreduce(len(items))
    for i0 in range(total):
        note("allgather:4")
        agreed1 = comm.allgather(bool(len(pending) > 1))
        if any(agreed1):
            acc = acc * 2 % 97
        acc -= 3
    note("allreduce:5")
    acc += comm.allreduce(rank * 2 + 1)
    if not flag:
        acc += refresh_2(comm, acc)  # expect: CSL101
    if rank == 0:
        comm.send(acc, dest=1, tag=7)
    elif rank == 1:
        acc += comm.recv(source=0, tag=7)
    acc += exchange_3(comm, int(flag))
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
