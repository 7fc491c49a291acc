"""SPMD program 163 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_163.py``; every rank prints one TRACE line.
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
    note("allreduce:1")
    agreed0 = comm.allreduce(int(bool(rank > 0)), op=MPI.MAX)
    if agreed0:
        remaining = len(items)
        while note("allreduce:2") and comm.allreduce(remaining) > 0:
            if remaining > 0:
                remaining -= 1
                acc += 1
        note("allreduce:3")
        shared, local = comm.allreduce(rank), rank
        if shared > 0:
            note("allgather:4")
            acc += sum(comm.allgather(len(items)))
        acc += local
    note("allreduce:5")
    shared, local = comm.allreduce(rank * 2 + 1), len(items)
    if shared > 0:
        note("allreduce:6")
        acc += comm.allreduce(int(flag))
    acc += local
    payload = len(items) if not flag else 0
    note("allreduce:7")
    acc += comm.allreduce(payload)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
