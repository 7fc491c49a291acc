"""SPMD program 139 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_139.py``; every rank prints one TRACE line.
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


class Stage1:
    """A pipeline step whose collective every rank enters."""

    def __init__(self, comm, world):
        self.comm = comm
        self.world = world
        self.rank = comm.Get_rank()

    def step(self, value):
        if self.world == 1:
            return value
        if self.rank == 0:
            value += 1
        note("allreduce:1")
        return self.comm.allreduce(value)


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    items = list(range(rank % 3))
    flag = rank % 2 == 0
    note("allreduce:2")
    any_flag = comm.allreduce(int(flag), op=MPI.MAX)
    try:
        note("allreduce:3")
        acc += comm.allreduce(int(flag))
        if flag:
            raise ValueError("local check failed")
        acc += 1
    except ValueError:
        acc -= 1
    if any_flag:
        sub = comm.Split(rank % 2, rank)
        if rank % 2 == 0:
            acc += sub.bcast(acc, root=0)
    if size % 2 == 1:
        for j1 in range(len(items)):
            acc += sum(items)
        acc += Stage1(comm, size).step(acc)
    else:
        note("allgather:4")
        agreed1 = comm.allgather(bool(not flag))
        if any(agreed1):
            if rank == 0:
                comm.send(acc, dest=1, tag=7)
            elif rank == 1:
                acc += comm.recv(source=0, tag=7)
            acc -= 4
        try:
            note("barrier:5")
            comm.barrier()
            if rank == size - 1:
                raise ValueError("local check failed")
            acc += 1
        except ValueError:
            acc -= 1
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
