"""SPMD program 078 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_078.py``; every rank prints one TRACE line.
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


def validate_1(entries):
    """Reject an empty local backlog."""
    if not entries:
        raise ValueError("empty backlog")
    return len(entries)


def main():
    """Run this rank's part of the program."""
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    size = comm.Get_size()
    acc = rank
    items = list(range(rank % 3))
    pending = {f"req{i}": i for i in range(rank + 1)}
    note("allgather:1")
    lengths = comm.allgather(len(items))
    if max(lengths) > 0:
        if max(lengths) > 0:
            try:
                acc += validate_1(items)
                note("allgather:2")
                acc += sum(comm.allgather(len(pending)))  # expect: CSL104
            except ValueError:
                acc -= 1
    acc += len(pending)
    assert 0 <= rank < size, "rank out of range"
    note("barrier:3")
    comm.barrier()
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
