"""Run an example and its fixed version on real ranks and compare what each rank ends with.

The intended semantics of a fix: a rank that took the guarded path ends as
the original program would have left it had its collective run over the
ranks that reached it; every other rank ends exactly as the original left it.
The reference is therefore the original program run with each collective
confined to a real sub-group of the ranks that reach it (a gloo group from
``new_group``, an MPI communicator from ``Split``); rank ids, sizes and
everything else stay those of the whole world.  The fixed program runs
unconfined on the whole world.  Each scenario declares which ranks reach the
collective (``takes``); the reference run checks that declaration.

Used by ``tests/test_fix_behaviour.py`` (gloo, in forked processes) and run
under ``mpiexec`` as a script for the mpi4py examples.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys

#: torch.distributed functions a reference run confines (the preset's functional API)
TORCH_COLLECTIVES = ("all_reduce", "all_reduce_coalesced", "broadcast", "all_gather", "all_gather_into_tensor",
                     "all_gather_object", "broadcast_object_list", "barrier", "monitored_barrier", "reduce",
                     "reduce_scatter", "gather", "scatter", "all_to_all")


def run_program(source: str, behaviour, scenario, names: dict):
    """Execute ``source``, then the scenario's setup and the call; the observed value."""
    namespace: dict = {"__name__": "cslint_example"}
    exec(compile(source, "<example>", "exec"), namespace)  # noqa: S102 - the test's own examples
    namespace.update(names)
    exec(scenario.setup, namespace)  # noqa: S102
    namespace["result"] = eval(behaviour.call, namespace)  # noqa: S307
    return eval(behaviour.observe, namespace)  # noqa: S307


# -- gloo ----------------------------------------------------------------------------------------


@contextlib.contextmanager
def confined_torch(dist, group):
    """Route the default-group collectives of ``dist`` to ``group``; yields a
    one-item list that turns True when any collective is called."""
    reached = [False]
    originals = {name: getattr(dist, name) for name in TORCH_COLLECTIVES if hasattr(dist, name)}

    def confine(function):
        def call(*args, **kwargs):
            reached[0] = True
            if group is not None and kwargs.get("group") is None:
                kwargs["group"] = group
            return function(*args, **kwargs)
        return call

    for name, function in originals.items():
        setattr(dist, name, confine(function))
    try:
        yield reached
    finally:
        for name, function in originals.items():
            setattr(dist, name, function)


def gloo_rank(rank: int, world: int, store: str, original: str, fixed: str, behaviour, queue) -> None:
    """One rank of a gloo job: every scenario, reference then fixed.  A rank
    that fails dies with its traceback and sends nothing; the parent reports
    the missing rank (the other one is killed when its collective times out)."""
    from datetime import timedelta

    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo", store=dist.FileStore(store, world), rank=rank, world_size=world,
                            timeout=timedelta(seconds=30))
    names = {"rank": rank, "world": world, "torch": torch}
    out = []
    for scenario in behaviour.scenarios:
        takes = sorted(scenario.takes)
        group = dist.new_group(takes) if 0 < len(takes) < world else None  # every rank creates it
        with confined_torch(dist, group) as reached:
            reference = run_program(original, behaviour, scenario, names)
        participants: list = [None] * world
        dist.all_gather_object(participants, reached[0])
        dist.barrier()
        result = run_program(fixed, behaviour, scenario, names)
        dist.barrier()
        out.append({"reference": reference, "fixed": result,
                    "participants": [r for r, p in enumerate(participants) if p]})
    queue.put((rank, out))
    dist.destroy_process_group()


# -- MPI -----------------------------------------------------------------------------------------

#: mpi4py Comm methods a reference run confines (the preset's collectives)
MPI_COLLECTIVES = ("allreduce", "Allreduce", "bcast", "Bcast", "allgather", "Allgather", "Allgatherv", "gather",
                   "Gather", "scatter", "Scatter", "reduce", "Reduce", "barrier", "Barrier", "alltoall",
                   "Alltoall", "Reduce_scatter", "Scan", "Exscan")


class ConfinedComm:
    """The world communicator, with its collectives issued on ``sub`` (a real
    communicator of the ranks that reach them)."""

    def __init__(self, world, sub):
        self._world = world
        self._sub = sub
        self.reached = False

    def __getattr__(self, name):
        if name in MPI_COLLECTIVES:
            self.reached = True
            return getattr(self._sub, name)
        return getattr(self._world, name)


def mpi_main(case_path: str, out_dir: str) -> None:
    """``mpiexec -n N python fix_behaviour.py CASE.json OUT``: one JSON result file per rank."""
    from types import SimpleNamespace

    from mpi4py import MPI

    with open(case_path, encoding="utf-8") as handle:
        case = json.load(handle)
    behaviour = SimpleNamespace(call=case["call"], observe=case["observe"])
    world = MPI.COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()
    out = []
    for setup, takes in case["scenarios"]:
        scenario = SimpleNamespace(setup=setup, takes=takes)
        sub = world.Split(0 if rank in takes else MPI.UNDEFINED, rank)
        confined = ConfinedComm(world, sub if sub != MPI.COMM_NULL else world)
        reference = run_program(case["original"], behaviour, scenario, {"rank": rank, "world": size, "comm": confined})
        participants = world.allgather(confined.reached)
        world.Barrier()
        result = run_program(case["fixed"], behaviour, scenario, {"rank": rank, "world": size, "comm": world})
        world.Barrier()
        if sub != MPI.COMM_NULL:
            sub.Free()
        out.append({"reference": reference, "fixed": result,
                    "participants": [r for r, p in enumerate(participants) if p]})
    with open(os.path.join(out_dir, f"rank{rank}.json"), "w", encoding="utf-8") as handle:
        json.dump({"rank": rank, "scenarios": out}, handle)


if __name__ == "__main__":
    mpi_main(sys.argv[1], sys.argv[2])
