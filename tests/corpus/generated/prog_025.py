"""SPMD program 025 of the cslint accuracy corpus (seed 20261202, hazard).

Run with ``mpiexec -n 2 python prog_025.py``; every rank prints one TRACE line.
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
    flag = rank % 2 == 0
    if size > 1:
        note("allgather:1")
        votes = comm.allgather(bool(rank % 2 == 1))
    else:
        votes = [bool(rank % 2 == 1)]
    if any(votes):
        note("allreduce:2")
        agreed1 = comm.allreduce(int(bool(flag)), op=MPI.MAX)
        if agreed1:
            note("gather:3")
            collected = comm.gather(int(flag), root=0)
            if collected is not None:
                acc += sum(collected)
            if rank == 0:
                comm.send(acc, dest=1, tag=7)
            elif rank == 1:
                acc += comm.recv(source=0, tag=7)
        note("barrier:4")
        comm.barrier()
    try:
        limit = int(LIMIT)
    except (TypeError, ValueError):
        limit = 1
    if limit > 1:
        note("bcast:5")
        acc += comm.bcast(rank, root=0)
    launch_rank = int(os.environ.get("PMI_RANK", "0"))
    if launch_rank > 0:
        note("allreduce:6")
        acc += comm.allreduce(int(flag))  # expect: CSL101
    sys.stdout.write(f"TRACE {rank} {','.join(TRACE)}\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
    sys.exit(0)
