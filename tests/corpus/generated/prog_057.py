"""SPMD program 057 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_057.py``; every rank prints one TRACE line.
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


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    flag = rank % 2 == 0
    pending = {f"req{i}": i for i in range(rank + 1)}
    acc += exchange_1(comm, len(pending))
    note("allreduce:3")
    shared, local = comm.allreduce(len(pending)), rank * 2 + 1
    if shared > 0:
        note("barrier:4")
        comm.barrier()
    acc += local
    payload = int(flag) if not flag else 0
    note("allreduce:5")
    acc += comm.allreduce(payload)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
