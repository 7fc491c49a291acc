"""SPMD program 077 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_077.py``; every rank prints one TRACE line.
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


def exchange_2(comm, value):
    """Combine `value` over all ranks (echo)."""
    if comm.Get_size() == 1:
        return value
    note("allreduce:3")
    return comm.allreduce(value)


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    items = list(range(rank % 3))
    pending = {f"req{i}": i for i in range(rank + 1)}
    if LIMIT > 2:
        try:
            if rank > 0:
                raise ValueError("local input rejected")
            note("allreduce:4")
            acc += comm.allreduce(rank)  # expect: CSL104
        except ValueError:
            acc -= 1
    acc += exchange_1(comm, len(items))
    acc += exchange_2(comm, len(pending))
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
