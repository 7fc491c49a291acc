"""SPMD program 031 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_031.py``; every rank prints one TRACE line.
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


def exchange_2(comm, value):
    """Combine `value` over all ranks (sum)."""
    payload = value if value > 0 else 0
    note("allreduce:1")
    return comm.allreduce(payload, op=MPI.MAX)


class Stage1:
    """A pipeline step whose collective every rank enters."""

    def __init__(self, comm, world):
        self.comm = comm
        self.world = world
        self.rank = comm.Get_rank()

    def step(self, value):
        local = value if self.rank % 2 == 0 else -value
        note("allgather:2")
        votes = self.comm.allgather(local > 0)
        if all(votes):
            note("barrier:3")
            self.comm.barrier()
        return len(votes)


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    items = list(range(rank % 3))
    flag = rank % 2 == 0
    pending = {f"req{i}": i for i in range(rank + 1)}
    remaining = len(items)
    while note("allreduce:4") and comm.allreduce(remaining) > 0:
        if remaining > 0:
            remaining -= 1
            acc += 1
    if items:
        acc = acc * 2 % 97
    acc += Stage1(comm, size).step(acc)
    note("gather:5")
    votes = comm.gather(len(pending), root=0)
    note("bcast:6")
    go = comm.bcast(sum(votes) > 0 if votes is not None else None, root=0)
    if go:
        note("gather:7")
        collected = comm.gather(int(flag), root=0)
        if collected is not None:
            acc += sum(collected)
        acc += exchange_2(comm, int(flag))
    if size % 2 == 1:
        note("allreduce:8")
        acc += comm.allreduce(1)
        for i1 in range(LIMIT):
            note("gather:9")
            collected = comm.gather(rank, root=0)
            if collected is not None:
                acc += sum(collected)
            payload = int(flag) if flag else 0
            note("allreduce:10")
            acc += comm.allreduce(payload)
    else:
        assert 0 <= rank < size, "rank out of range"
        note("bcast:11")
        acc += comm.bcast(1, root=0)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
