"""Cost and speed of the runtime collective sanitizer (cslint.runtime).

    .venv/bin/python bench/sanitizer.py [--iters N] [--ranks 2,4] [--quick]

Prints, from one run:

1. overhead on a collective-bound loop of object allgathers (MPI via mpi4py
   and the replica's `MPIDist`; gloo via torch.distributed), sanitized vs bare;
2. on gloo, the sanitizer against ``TORCH_DISTRIBUTED_DEBUG=DETAIL`` (object
   allgathers and tensor all_reduce) — the baseline is measured in this run;
3. time to diagnosis of the replica's deadlocks (fill gate on / off, PP):
   from the first diverging collective to the first rank report, and the whole
   run until the job is down (the executor's own hang detector would take 300 s).

Goals: <= 1.10x bare on object allgathers; diagnosis within 5 s.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples" / "trtllm_replica"))


# ---------------------------------------------------------------- workers
def _loop(fn, iters: int, barrier) -> float:
    barrier()
    t0 = time.perf_counter()
    for i in range(iters):
        fn(i)
    return (time.perf_counter() - t0) / iters


def _best_of(fn, iters: int, barrier, repeats: int = 3) -> float:
    return min(_loop(fn, iters, barrier) for _ in range(repeats))


MPI_LOOPS = ("comm.allgather(int)", "MPIDist.tp_allgather(int)", "MPIDist.tp_allgather(status)")


def worker_mpi(iters: int, out: str) -> None:
    from mpi4py import MPI
    from tensorrt_llm._torch.distributed.communicator import MPIDist

    from cslint.runtime import wrap

    comm = MPI.COMM_WORLD
    report = tempfile.mkdtemp(prefix="bench-san-")
    dist = MPIDist(tp_size=comm.Get_size(), pp_size=1)
    sdist = wrap(dist, report_dir=report, timeout=30)
    scomm = wrap(comm, report_dir=report, timeout=30, group="world")
    barrier = comm.Barrier
    _loop(lambda i: comm.allgather(i), 200, barrier)  # warm-up
    _loop(lambda i: sdist.tp_allgather(i), 200, barrier)
    results = {}
    # interleave bare and sanitized rounds so drift hits both alike
    rounds = {f"{name} {mode}": [] for name in MPI_LOOPS for mode in ("bare", "sanitized")}
    status = (3, list(range(16)), "ready")  # a status tuple like the executor's fill-gate allgather
    for _ in range(5):
        rounds["comm.allgather(int) bare"].append(_loop(lambda i: comm.allgather(i), iters, barrier))
        rounds["comm.allgather(int) sanitized"].append(_loop(lambda i: scomm.allgather(i), iters, barrier))
        rounds["MPIDist.tp_allgather(int) bare"].append(_loop(lambda i: dist.tp_allgather(i), iters, barrier))
        rounds["MPIDist.tp_allgather(int) sanitized"].append(_loop(lambda i: sdist.tp_allgather(i), iters,
                                                                    barrier))
        rounds["MPIDist.tp_allgather(status) bare"].append(_loop(lambda i: dist.tp_allgather(status), iters,
                                                                 barrier))
        rounds["MPIDist.tp_allgather(status) sanitized"].append(_loop(lambda i: sdist.tp_allgather(status),
                                                                      iters, barrier))
    for key, values in rounds.items():
        results[key] = statistics.median(values)
    if comm.Get_rank() == 0:
        with open(out, "w") as fh:
            json.dump(results, fh)
    sdist.sanitizer._stop.set()


def _gloo_child(rank: int, world: int, store_path: str, mode: str, iters: int, out: str) -> None:
    if mode == "detail":
        os.environ["TORCH_DISTRIBUTED_DEBUG"] = "DETAIL"
    else:
        os.environ.pop("TORCH_DISTRIBUTED_DEBUG", None)
    import torch
    import torch.distributed as tdist

    tdist.init_process_group("gloo", store=tdist.FileStore(store_path, world), rank=rank, world_size=world)
    api = tdist
    if mode == "sanitized":
        from cslint.runtime import wrap

        api = wrap(tdist, report_dir=tempfile.mkdtemp(prefix="bench-san-"), timeout=30)
    tensor = torch.ones(16)

    def gather(i):
        out_list = [None] * world
        api.all_gather_object(out_list, i)

    def reduce(i):
        api.all_reduce(tensor)

    barrier = tdist.barrier
    _loop(gather, 50, barrier)
    _loop(reduce, 50, barrier)
    res = {"all_gather_object": _best_of(gather, iters, barrier), "all_reduce": _best_of(reduce, iters, barrier)}
    if rank == 0:
        with open(out, "w") as fh:
            json.dump(res, fh)
    tdist.barrier()
    os._exit(0)


def run_gloo(world: int, mode: str, iters: int) -> dict:
    import multiprocessing as mp

    import torch  # noqa: F401 - imported once, inherited by the forked ranks

    ctx = mp.get_context("fork")
    tmp = tempfile.mkdtemp(prefix="bench-gloo-")
    out = os.path.join(tmp, "res.json")
    procs = [ctx.Process(target=_gloo_child, args=(r, world, os.path.join(tmp, "store"), mode, iters, out))
             for r in range(world)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
        if p.is_alive():
            p.kill()
    with open(out) as fh:
        return json.load(fh)


def run_mpi(world: int, iters: int) -> dict:
    from tensorrt_llm_patch.validate_runner import find_mpiexec, mpiexec_flags

    out = tempfile.mktemp(prefix="bench-mpi-", suffix=".json")
    mpiexec = find_mpiexec()
    cmd = [mpiexec, *mpiexec_flags(mpiexec), "-n", str(world), sys.executable, __file__, "--worker", "mpi", "--iters", str(iters),
           "--out", out]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(cmd, env=env, start_new_session=True)
    try:
        proc.wait(timeout=300)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # no rank outlives the measurement
        except ProcessLookupError:
            pass
    with open(out) as fh:
        return json.load(fh)


def time_to_diagnosis() -> list[tuple[str, float, float, str]]:
    from tensorrt_llm_patch.validate_runner import (
        DEFAULT_TREE,
        RunConfig,
        find_mpiexec,
        run_config,
    )

    rows = []
    for cfg in (RunConfig("mpi", 4, 3, "on"), RunConfig("mpi", 4, 3, "off"), RunConfig("mpi", 4, 3, "off", pp=True)):
        with tempfile.TemporaryDirectory() as tmp:
            result = run_config(cfg, DEFAULT_TREE, Path(tmp) / "run", model="numpy", sanitizer_timeout=2.0,
                                timeout=60, mpiexec=find_mpiexec(), link_findings=False, svg=False)
        detect = result.detect_seconds if result.detect_seconds is not None else float("nan")
        sites = ", ".join(f"{r}:{f.split('.')[-1]}" for r, f in sorted(result.sites().items()))
        rows.append((cfg.name, detect, result.seconds, f"{result.outcome}; {sites}"))
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--worker", choices=["mpi"], help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    p.add_argument("--iters", type=int, default=2000)
    p.add_argument("--ranks", default="2,4")
    p.add_argument("--quick", action="store_true", help="fewer iterations (smoke run)")
    args = p.parse_args(argv)
    if args.worker == "mpi":
        worker_mpi(args.iters, args.out)
        return 0
    iters = 300 if args.quick else args.iters
    ranks = [int(r) for r in args.ranks.split(",")]

    print("== 1. object allgather loop, MPI (mpi4py + mpich), µs per call (median of 5 interleaved rounds)")
    print(f"{'ranks':>5}  {'loop':<30} {'bare':>8} {'sanitized':>10} {'ratio':>6}")
    cores = os.cpu_count() or 1
    for world in ranks:
        # oversubscribed ranks cost milliseconds per collective (scheduler bound): fewer iterations
        res = run_mpi(world, iters if world <= cores else max(40, iters // 40))
        for name in MPI_LOOPS:
            bare, san = res[f"{name} bare"] * 1e6, res[f"{name} sanitized"] * 1e6
            print(f"{world:>5}  {name:<30} {bare:8.1f} {san:10.1f} {san / bare:6.2f}x  (+{san - bare:.1f} µs)")

    print(f"   ({cores} CPU cores; ranks beyond that are oversubscribed and scheduler-bound)")
    print("\n== 2. gloo (torch.distributed, fork), µs per call (best of 3)")
    print(f"{'ranks':>5}  {'op':<18} {'bare':>8} {'sanitized':>10} {'ratio':>6} {'DETAIL':>9} {'ratio':>6}")
    for world in ranks:
        gloo_iters = max(100, iters // 4) if world <= cores else max(40, iters // 40)
        bare = run_gloo(world, "bare", gloo_iters)
        san = run_gloo(world, "sanitized", gloo_iters)
        detail = run_gloo(world, "detail", gloo_iters)
        for op in ("all_gather_object", "all_reduce"):
            b, s, d = bare[op] * 1e6, san[op] * 1e6, detail[op] * 1e6
            print(f"{world:>5}  {op:<18} {b:8.1f} {s:10.1f} {s / b:6.2f}x {d:9.1f} {d / b:6.2f}x")

    print("\n== 3. time to diagnosis of the replica's deadlock (MPI, 4 ranks, watchdog 2 s)")
    print(f"{'config':<30} {'detect s':>8} {'run s':>6}  outcome")
    for name, detect, total, outcome in time_to_diagnosis():
        print(f"{name:<30} {detect:8.2f} {total:6.2f}  {outcome}")
    print("(unsanitized, the executor's HangDetector fires after 300 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
