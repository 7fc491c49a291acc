"""SPMD program 169 of the cslint accuracy corpus (seed 20261202, safe).

Run with ``mpiexec -n 2 python prog_169.py``; every rank prints one TRACE line.
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
    assert 0 <= rank < size, "rank out of range"
    note("bcast:1")
    acc += comm.bcast(1, root=0)
    if size > 1:
        note("allgather:2")
        votes = comm.allgather(bool(flag))
    else:
        votes = [bool(flag)]
    if any(votes):
        assert 0 <= rank < size, "rank out of range"
        note("bcast:3")
        acc += comm.bcast(len(pending), root=0)
        remaining = len(items)
        while note("allreduce:4") and comm.allreduce(remaining) > 0:
            if remaining > 0:
                remaining -= 1
                acc += 1
    payload = rank if len(items) > 0 else 0
    note("allreduce:5")
    acc += comm.allreduce(payload)
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
