"""SPMD program 082 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_082.py``; every rank prints one TRACE line.
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
    payload = value if value > 0 else 0
    note("allreduce:1")
    return comm.allreduce(payload, op=MPI.MAX)


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    t0 = time.monotonic()
    if rank == 0:
        time.sleep(0.15)
    slow = time.monotonic() - t0 > 0.1
    if size > 1:
        note("allgather:2")
        votes = comm.allgather(bool(rank > 0))
    else:
        votes = [bool(rank > 0)]
    if any(votes):
        acc += exchange_1(comm, rank)
    payload = rank * 2 + 1 if slow else 0
    note("allreduce:3")
    acc += comm.allreduce(payload)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
