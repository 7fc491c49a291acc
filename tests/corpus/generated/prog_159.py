"""SPMD program 159 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_159.py``; every rank prints one TRACE line.
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
    any_flag = comm.allreduce(int(flag), op=MPI.MAX)
    if rank == 0:
        comm.send(acc, dest=1, tag=7)
    elif rank == 1:
        acc += comm.recv(source=0, tag=7)
    for i0 in range(size):
        if size > 1:
            note("allgather:2")
            votes = comm.allgather(bool(len(pending) > 1))
        else:
            votes = [bool(len(pending) > 1)]
        if any(votes):
            if rank == 0:
                comm.send(acc, dest=1, tag=7)
            elif rank == 1:
                acc += comm.recv(source=0, tag=7)
    if any_flag:
        for u1 in range(size):
            countdown = len(items)
            while countdown > 0:
                countdown -= 1
                note("barrier:3")
                comm.barrier()  # expect: CSL103
    payload = int(flag) if len(pending) > 1 else 0
    note("allreduce:4")
    acc += comm.allreduce(payload)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
