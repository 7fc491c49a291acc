"""SPMD program 142 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_142.py``; every rank prints one TRACE line.
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
    payload = value if value > 0 else 0
    note("allreduce:1")
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
    note("bcast:2")
    root_len = comm.bcast(len(items), root=0)
    if root_len == 0:
        acc -= 4
        if rank == 0:
            comm.send(acc, dest=1, tag=7)
        elif rank == 1:
            acc += comm.recv(source=0, tag=7)
    if rank == size - 1:
        acc += sum(items)
        note("allreduce:pair1")
        acc += comm.allreduce(1)
    else:
        note("allreduce:pair1")
        acc += comm.allreduce(len(items))
    acc += (note("allreduce:3") and comm.allreduce(acc)) if flag else 0  # expect: CSL101
    note("gather:4")
    votes = comm.gather(len(pending), root=0)
    note("bcast:5")
    go = comm.bcast(sum(votes) > 0 if votes is not None else None, root=0)
    if go:
        payload = len(items) if rank == size - 1 else 0
        note("allreduce:6")
        acc += comm.allreduce(payload)
        acc += exchange_1(comm, int(flag))
    note("allgather:7")
    agreed0 = comm.allgather(bool(flag))
    if any(agreed0):
        payload = rank * 2 + 1 if rank == 0 else 0
        note("allreduce:8")
        acc += comm.allreduce(payload)
        note("gather:9")
        collected = comm.gather(len(items), root=0)
        if collected is not None:
            acc += sum(collected)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
