"""Shapes of mpi4py applications: solvers, timed checkpoints, sub-communicators."""

import numpy as np
from mpi4py import MPI


def load_settings():
    return {"tolerance": 1e-6, "steps": 100}


def settings_from_root_only(comm):
    """Only the root enters the broadcast."""
    settings = None
    if comm.Get_rank() == 0:
        settings = comm.bcast(load_settings(), root=0)  # expect: CSL101
    return settings


def settings_everywhere(comm):
    settings = load_settings() if comm.Get_rank() == 0 else None
    return comm.bcast(settings, root=0)


def relax(x, rank):
    return 0.5 * x + 0.1 * (rank + 1)


def solve_until_local_convergence(comm, x, tolerance):
    """The loop exit looks at this rank's error only."""
    rank = comm.Get_rank()
    error = 1.0
    recv = np.zeros(1)
    while error > tolerance:
        new_x = relax(x, rank)
        error = abs(new_x - x)
        x = new_x
        comm.Allreduce(np.array([x]), recv, op=MPI.SUM)  # expect: CSL103
    return x


def solve_until_global_convergence(comm, x, tolerance):
    rank = comm.Get_rank()
    error = 1.0
    while error > tolerance:
        new_x = relax(x, rank)
        error = comm.allreduce(abs(new_x - x), op=MPI.MAX)
        x = new_x
    return x


def iterate_until_all_done(comm, work):
    """Each rank reports whether it is done; the loop exits on the agreement."""
    pending = list(work)
    while True:
        if pending:
            pending.pop()
        done = comm.allreduce(not pending, op=MPI.LAND)
        if done:
            break
    return len(pending)


def report_elapsed(comm, start):
    """Timing used only for output."""
    elapsed = MPI.Wtime() - start
    if comm.Get_rank() == 0:
        print(f"elapsed {elapsed:.3f}s")


class TimedCheckpointer:
    def __init__(self, comm, interval):
        self.comm = comm
        self.interval = interval
        self.last_save = MPI.Wtime()

    def maybe_checkpoint(self, state):
        """Each rank reads its own clock before the barrier."""
        if MPI.Wtime() - self.last_save > self.interval:
            self.comm.Barrier()  # expect: CSL101
            self.last_save = MPI.Wtime()
        return state

    def maybe_checkpoint_agreed(self, state):
        due = self.comm.bcast(MPI.Wtime() - self.last_save > self.interval, root=0)
        if due:
            self.comm.Barrier()
            self.last_save = MPI.Wtime()
        return state


def ring_exchange(comm, value):
    """Point-to-point messages in an even/odd order; no collective involved."""
    rank = comm.Get_rank()
    size = comm.Get_size()
    right = (rank + 1) % size
    left = (rank - 1) % size
    if rank % 2 == 0:
        comm.send(value, dest=right)
        received = comm.recv(source=left)
    else:
        received = comm.recv(source=left)
        comm.send(value, dest=right)
    return received


def split_for_first_two(comm):
    """Split is collective over the parent communicator."""
    rank = comm.Get_rank()
    if rank < 2:
        return comm.Split(color=0, key=rank)  # expect: CSL101
    return None


def split_even_odd(comm, value):
    rank = comm.Get_rank()
    sub = comm.Split(color=rank % 2, key=rank)
    total = sub.allreduce(value)
    if sub.Get_rank() == 0:
        print(f"color {rank % 2}: {total}")
    return total


def positive_on_root(comm, value):
    """`and` evaluates the reduction only where the rank test passed."""
    if comm.Get_rank() == 0 and comm.allreduce(value) > 0:  # expect: CSL101
        return True
    return False


def positive_then_print(comm, value):
    if comm.allreduce(value) > 0 and comm.Get_rank() == 0:
        print("positive")


def is_root(comm):
    return comm.Get_rank() == 0


def barrier_on_root(comm):
    if is_root(comm):
        comm.Barrier()  # expect: CSL101


def total_if_parallel(comm, value):
    return comm.allreduce(value) if comm.Get_size() > 1 else value


def total_unless_root(comm, value):
    return comm.allreduce(value) if comm.Get_rank() > 0 else value  # expect: CSL101


def gather_then_bcast_on_root(comm, value):
    """The gathered list exists on the root only."""
    gathered = comm.gather(value, root=0)
    if gathered is not None:
        return comm.bcast(sum(gathered), root=0)  # expect: CSL101
    return None


def gather_then_print_on_root(comm, value):
    gathered = comm.gather(value, root=0)
    if gathered is not None:
        print(sum(gathered))
    return comm.bcast(sum(gathered) if gathered is not None else 0, root=0)


def poll_until_deadline(comm, deadline):
    """Each rank polls against its own clock: the iteration counts differ."""
    polls = 0
    while MPI.Wtime() < deadline:
        polls += comm.allreduce(1)  # expect: CSL103
    return polls


def poll_until_agreed_deadline(comm, deadline):
    """The ranks agree every iteration whether anyone's clock has passed the deadline."""
    polls = 0
    while not comm.allreduce(MPI.Wtime() >= deadline, op=MPI.LOR):
        polls += 1
    return polls
