"""SPMD program 168 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_168.py``; every rank prints one TRACE line.
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
    t0 = time.monotonic()
    if rank == 0:
        time.sleep(0.15)
    slow = time.monotonic() - t0 > 0.1
    note("allreduce:1")
    any_flag = comm.allreduce(int(flag), op=MPI.MAX)
    payload = len(pending) if rank > 0 else 0
    note("allreduce:2")
    acc += comm.allreduce(payload)
    note("gather:3")
    collected = comm.gather(len(pending), root=0)
    if collected is not None:
        acc += sum(collected)
    if any_flag:
        for u1 in range(size):
            if slow:
                sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
                sys.exit(0)
            note("allgather:4")
            acc += sum(comm.allgather(rank))  # expect: CSL102
    sub = comm.Split(rank % 2, rank)
    if rank % 2 == 1:
        sub.barrier()
    for i0 in range(2):
        payload = len(pending) if len(items) > 0 else 0
        note("allreduce:5")
        acc += comm.allreduce(payload)
        acc -= 1
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
