"""Cost and speed of the runtime collective sanitizer (cslint.runtime).

    .venv/bin/python bench/sanitizer.py [--ranks 2,4] [--rounds N] [--quick] [--no-diagnosis]

Prints, from one run:

0. the ledger's own CPU cost per object allgather, in one process (an
   allgather stand-in that pickles like mpi4py does), for the C ledger and the
   pure-Python reference;
1. MPI (mpi4py + mpich): object allgathers (small and 1 MiB payloads, bare
   communicator and the replica's ``MPIDist`` through the ``Distributed``
   proxy, one call site and three in turn) and an object allreduce, bare
   against sanitized;
2. gloo (torch.distributed, fork): ``all_reduce`` (16 floats and 1 Mi floats)
   and ``all_gather_object``, bare against sanitized, with
   ``TORCH_DISTRIBUTED_DEBUG=DETAIL`` (torch's own collective checker, on a
   group created in DETAIL mode in the same processes) as the anchor;
3. time to diagnosis of the replica's deadlocks (fill gate on / off, PP).

How it measures: each row runs inside one job (one ``mpiexec``, or one set of
forked ranks), in rounds; a round times a block of calls of each variant, the
variants taking turns to go first.  Per variant the table shows the median
time per call over the rounds; ``ratio`` is the median over rounds of the
sanitized block's time over the bare block's time in the same round, so drift
of a shared machine hits both alike; ``A/A`` is that ratio for a second bare
series, i.e. how far a ratio moves by noise alone in that row.  Ranks beyond the CPU count are
oversubscribed: their collectives cost milliseconds of scheduling and vary by
a factor of ten from call to call, so they run longer blocks and fewer rounds.

Goal (issue 17): ratio <= 1.10 on the MPI object allgather and the gloo
all_reduce, at 2 and 4 ranks, small and large payloads; diagnosis within 5 s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples" / "trtllm_replica"))

from cslint.boundedruns import fork_ranks, start_bounded, wait_bounded

GOAL = 1.10
LARGE = 1 << 20  # bytes of the large object payload; floats of the large all_reduce


# ---------------------------------------------------------------- measuring
def _block(fn, calls: int, barrier) -> float:
    """Seconds per call of `calls` calls of fn(i), started together on every rank."""
    barrier()
    t0 = time.perf_counter()
    for i in range(calls):
        fn(i)
    return (time.perf_counter() - t0) / calls


def paired_rounds(variants: dict, calls: int, rounds: int, barrier, warmup: int = 2) -> dict:
    """Time every variant once per round, taking turns to go first; returns per-variant lists."""
    names = list(variants)
    for _ in range(warmup):
        for name in names:
            _block(variants[name], calls, barrier)
    times: dict[str, list[float]] = {name: [] for name in names}
    for r in range(rounds):
        order = names[r % len(names):] + names[: r % len(names)]
        for name in order:
            times[name].append(_block(variants[name], calls, barrier))
    return times


def summarize(times: dict, base: str = "bare") -> dict:
    """Median µs per call per variant, and each variant's median paired ratio to `base`."""
    out = {}
    for name, values in times.items():
        ratios = [v / b for v, b in zip(values, times[base])]
        out[name] = {"us": statistics.median(values) * 1e6, "ratio": statistics.median(ratios),
                     "rounds": len(values)}
    return out


# ---------------------------------------------------------------- in-process cost
def ledger_cost(ranks: int = 2, rounds: int = 300, calls: int = 200) -> dict:
    """ns per call that each ledger adds to an allgather stand-in (one dumps, `ranks` loads), paired rounds."""
    import pickle

    from cslint.runtime.core import Sanitizer
    from cslint.runtime.ledger import Ledger, PyLedger

    def stand_in(obj):
        data = pickle.dumps(obj, 5)
        return [pickle.loads(data) for _ in range(ranks)]

    variants = {"bare": stand_in}
    for cls in dict.fromkeys((Ledger, PyLedger)):  # the C ledger when it was built, and the reference
        san = Sanitizer(0, ranks, report_dir=None, timeout=0)
        paths = san.paths
        ledger = cls("world", lambda frame, op, paths=paths: paths.resolve(frame, op, "world"), paths.skipped,
                     san.mismatch)
        variants[cls.implementation] = ledger.allgather(stand_in, "allgather")
    times = paired_rounds(variants, calls, rounds, lambda: None)
    bare = times["bare"]
    return {name: statistics.median(t - b for t, b in zip(values, bare)) * 1e9
            for name, values in times.items() if name != "bare"} | {"bare": statistics.median(bare) * 1e9}


# ---------------------------------------------------------------- MPI worker
def _three_sites(api_call):
    """Three call sites in turn, like one iteration of an executor loop."""

    def site_fill(i):
        return api_call((i, 1))

    def site_can_queue(i):
        return api_call(i)

    def site_done(i):
        return api_call(None)

    def loop(i):
        site_fill(i)
        site_can_queue(i)
        site_done(i)

    return loop


def worker_mpi(calls: int, rounds: int, out: str) -> None:
    from mpi4py import MPI
    from tensorrt_llm._torch.distributed.communicator import MPIDist

    from cslint.runtime import wrap
    from cslint.runtime.ledger import Ledger

    comm = MPI.COMM_WORLD
    report = tempfile.mkdtemp(prefix="bench-san-")
    dist = MPIDist(tp_size=comm.Get_size(), pp_size=1)
    sdist = wrap(dist, report_dir=report, timeout=30)
    scomm = wrap(comm, report_dir=report, timeout=30, group="world")
    barrier = comm.Barrier
    large = bytes(LARGE)
    rows = {
        "comm.allgather(int)": ({"bare": comm.allgather, "sanitized": scomm.allgather}, lambda f: lambda i: f(i), 1),
        "comm.allgather(1 MiB)": ({"bare": comm.allgather, "sanitized": scomm.allgather},
                                  lambda f: lambda i: f(large), 8),
        "MPIDist.tp_allgather(int)": ({"bare": dist.tp_allgather, "sanitized": sdist.tp_allgather},
                                      lambda f: lambda i: f(i), 1),
        "MPIDist.tp_allgather, 3 sites": ({"bare": dist.tp_allgather, "sanitized": sdist.tp_allgather},
                                          _three_sites, 3),
        "comm.allreduce(int)": ({"bare": comm.allreduce, "sanitized": scomm.allreduce}, lambda f: lambda i: f(i), 1),
    }
    results = {}
    for name, (apis, make, cost) in rows.items():
        variants = {variant: make(fn) for variant, fn in apis.items()}
        variants["bare again"] = make(apis["bare"])  # the A/A pair: how far two bare series differ by noise
        n = max(1, calls // cost)
        times = paired_rounds(variants, n, rounds if cost < 8 else max(10, rounds // 4), barrier)
        results[name] = summarize(times)
        results[name]["calls_per_block"] = n * (3 if "3 sites" in name else 1)
    if comm.Get_rank() == 0:
        with open(out, "w") as fh:
            json.dump({"rows": results, "ledger": Ledger.implementation}, fh)
    sdist.sanitizer.close()


def run_mpi(world: int, calls: int, rounds: int) -> dict:
    from tensorrt_llm_patch.validate_runner import find_mpiexec, mpiexec_flags

    out = os.path.join(tempfile.mkdtemp(prefix="bench-mpi-"), "res.json")
    mpiexec = find_mpiexec()
    cmd = [mpiexec, *mpiexec_flags(mpiexec), "-n", str(world), sys.executable, __file__, "--worker", "mpi",
           "--calls", str(calls), "--rounds", str(rounds), "--out", out]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = start_bounded(cmd, 900, env=env)
    if wait_bounded(proc, 900):  # no rank outlives the measurement, nor this process
        raise subprocess.TimeoutExpired(cmd, 900)
    with open(out) as fh:
        return json.load(fh)


# ---------------------------------------------------------------- gloo
def _gloo_child(rank: int, world: int, store_path: str, calls: int, rounds: int, out: str) -> None:
    os.environ.pop("TORCH_DISTRIBUTED_DEBUG", None)
    import torch
    import torch.distributed as tdist

    from cslint.runtime import wrap

    tdist.init_process_group("gloo", store=tdist.FileStore(store_path, world), rank=rank, world_size=world)
    ranks = list(range(world))
    bare_group = tdist.new_group(ranks)
    # torch's checker: a group created in DETAIL mode is wrapped in its ProcessGroupWrapper, which checks
    # every collective's op and shapes across ranks (what TORCH_DISTRIBUTED_DEBUG=DETAIL does to every group)
    tdist.set_debug_level(tdist.DebugLevel.DETAIL)
    detail_group = tdist.new_group(ranks)
    tdist.set_debug_level(tdist.DebugLevel.OFF)
    san = wrap(tdist, report_dir=tempfile.mkdtemp(prefix="bench-san-"), timeout=30)
    small, large = torch.ones(16), torch.ones(LARGE)

    def variants(op):
        return {"bare": op(tdist, bare_group), "sanitized": op(san, bare_group), "DETAIL": op(tdist, detail_group),
                "bare again": op(tdist, bare_group)}

    def all_reduce(tensor):
        return lambda api, group: lambda i: api.all_reduce(tensor, group=group)

    def all_gather_object(api, group):
        out = [None] * world

        def call(i):
            api.all_gather_object(out, i, group=group)

        return call

    rows = {"all_reduce(16 floats)": (all_reduce(small), 1), "all_reduce(1 Mi floats)": (all_reduce(large), 8),
            "all_gather_object(int)": (all_gather_object, 2)}
    barrier = tdist.barrier
    results = {}
    for name, (op, cost) in rows.items():
        times = paired_rounds(variants(op), max(1, calls // cost), max(10, rounds // max(1, cost // 2)), barrier)
        results[name] = summarize(times)
    if rank == 0:
        with open(out, "w") as fh:
            json.dump(results, fh)
    tdist.barrier()
    os._exit(0)


def run_gloo(world: int, calls: int, rounds: int) -> dict:
    import multiprocessing as mp

    import torch  # noqa: F401 - imported once, inherited by the forked ranks

    ctx = mp.get_context("fork")
    tmp = tempfile.mkdtemp(prefix="bench-gloo-")
    out = os.path.join(tmp, "res.json")
    procs = fork_ranks(ctx, _gloo_child, [(r, world, os.path.join(tmp, "store"), calls, rounds, out)
                                          for r in range(world)])
    for p in procs:
        p.join(timeout=900)
        if p.is_alive():
            p.kill()
    with open(out) as fh:
        return json.load(fh)


# ---------------------------------------------------------------- diagnosis
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


def _verdict(ratio: float) -> str:
    return "ok" if ratio <= GOAL else "OVER"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--worker", choices=["mpi"], help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    p.add_argument("--calls", type=int, default=20, help="calls per block (small payloads, ranks <= cores)")
    p.add_argument("--rounds", type=int, default=400, help="rounds per row (ranks <= cores)")
    p.add_argument("--ranks", default="2,4")
    p.add_argument("--quick", action="store_true", help="a smoke run: few rounds")
    p.add_argument("--no-diagnosis", action="store_true", help="skip section 3")
    args = p.parse_args(argv)
    if args.worker == "mpi":
        worker_mpi(args.calls, args.rounds, args.out)
        return 0
    rounds = 20 if args.quick else args.rounds
    ranks = [int(r) for r in args.ranks.split(",")]
    cores = os.cpu_count() or 1

    def shape(world: int, calls: int, rounds: int) -> tuple[int, int]:
        # oversubscribed ranks cost milliseconds per collective (scheduler time slices), and single calls
        # vary by a factor of ten: blocks of at least 4 calls, half the rounds
        return (calls, rounds) if world <= cores else (max(4, calls // 2), max(20, rounds // 2))

    failures = []
    print(f"{cores} CPU cores; ranks beyond that are oversubscribed. µs per call: median over rounds; "
          "ratio: median over rounds of sanitized/bare in the same round; A/A: the same for a second bare "
          "series (the noise floor of the row).")
    cost = ledger_cost(rounds=30 if args.quick else 300)
    print(f"\n== 0. the ledger's CPU cost per object allgather, one process (a 2-rank allgather stand-in: "
          f"{cost.pop('bare'):.0f} ns)")
    for name, ns in sorted(cost.items()):
        print(f"   {name:<7} ledger: +{ns:5.0f} ns per call (checks included: every 16th call of a loop carries one)")
    print("\n== 1. MPI (mpi4py + mpich)")
    header = f"{'ranks':>5}  {'collective':<32} {'bare':>9} {'sanitized':>10} {'ratio':>6} {'A/A':>6}  {'rounds':>6}"
    print(header)
    ledger = "?"
    for world in ranks:
        calls, rnds = shape(world, args.calls, rounds)
        res = run_mpi(world, calls, rnds)
        ledger = res["ledger"]
        for name, row in res["rows"].items():
            bare, san = row["bare"], row["sanitized"]
            goal = "allgather" in name
            mark = f"  {_verdict(san['ratio'])}" if goal else "  (no goal)"
            print(f"{world:>5}  {name:<32} {bare['us']:9.1f} {san['us']:10.1f} {san['ratio']:6.3f} "
                  f"{row['bare again']['ratio']:6.3f}  {bare['rounds']:>6}{mark}")
            if goal and san["ratio"] > GOAL:
                failures.append(f"MPI {world} ranks {name}: {san['ratio']:.3f}")
    print(f"   (sanitizer ledger: {ledger})")

    print("\n== 2. gloo (torch.distributed, fork); DETAIL = a group created with TORCH_DISTRIBUTED_DEBUG=DETAIL")
    print(f"{'ranks':>5}  {'collective':<32} {'bare':>9} {'sanitized':>10} {'ratio':>6} {'DETAIL':>9} {'ratio':>6} "
          f"{'A/A':>6}")
    for world in ranks:
        calls, rnds = shape(world, args.calls, rounds)
        res = run_gloo(world, max(2, calls // 4), rnds)
        for name, row in res.items():
            bare, san, detail = row["bare"], row["sanitized"], row["DETAIL"]
            goal = name.startswith("all_reduce")
            mark = f"  {_verdict(san['ratio'])}" if goal else "  (no goal)"
            print(f"{world:>5}  {name:<32} {bare['us']:9.1f} {san['us']:10.1f} {san['ratio']:6.3f} "
                  f"{detail['us']:9.1f} {detail['ratio']:6.3f} {row['bare again']['ratio']:6.3f}{mark}")
            if goal and san["ratio"] > GOAL:
                failures.append(f"gloo {world} ranks {name}: {san['ratio']:.3f}")

    if not args.no_diagnosis:
        print("\n== 3. time to diagnosis of the replica's deadlock (MPI, 4 ranks, watchdog 2 s)")
        print(f"{'config':<30} {'detect s':>8} {'run s':>6}  outcome")
        for name, detect, total, outcome in time_to_diagnosis():
            print(f"{name:<30} {detect:8.2f} {total:6.2f}  {outcome}")
        print("(unsanitized, the executor's HangDetector fires after 300 s)")
    print(f"\ngoal <= {GOAL:.2f}x: " + ("met" if not failures else "NOT met: " + "; ".join(failures)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
