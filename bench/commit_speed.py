"""How fast is one version of cslint next to another, on the same tree?

Both versions (a directory holding a checkout, or a git revision exported
with ``git archive``) run ``cslint check --no-cache --format json TREE`` as
fresh processes with this interpreter, alternately (old, new, old, new, ...),
so a machine that gets busier or quieter during the measurement slows both
alike.  The table gives each side's median wall time and CPU time (user +
system of the run and its workers, which a busy machine disturbs less than
the wall clock), the ratios of the medians, and the median of the per-pair
ratios.  Target for a behaviour-preserving restructuring: new/old <= 1.10.

    .venv/bin/python bench/commit_speed.py --old 19846d2 --new . --repeat 7

``--min-of N`` is the steadier measure on a shared machine: N interleaved
rounds, and only each side's least CPU time and the ratio of the two.  Other
processes can only add time to a run (cache misses, preemption, frequency
steps), never take it away, so the least of N runs is the closest to what the
version itself costs, where a median still moves with the load of the hour.

    .venv/bin/python bench/commit_speed.py --old main --new . --min-of 5 --jobs 1 \
        --config bench/realtree/cslint.toml ~/.cache/cslint-realtree/vllm-0.33.0/vllm
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
from realtree import pinned  # noqa: E402  (run as python bench/NAME.py: bench/ is first on sys.path)


@contextlib.contextmanager
def checkout(version: str):
    if os.path.isdir(version):
        yield os.path.abspath(version)
        return
    with tempfile.TemporaryDirectory(prefix="cslint-speed-") as tmp:
        archive = subprocess.run(["git", "-C", ROOT, "archive", version], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        yield tmp


def one_run(directory: str, tree: str, python: str, jobs, config=None) -> tuple:
    """(wall seconds, CPU seconds of the run and its workers)."""
    env = dict(os.environ, PYTHONPATH=directory)
    command = [python, "-m", "cslint", "check", "--no-cache", "--format", "json", tree]
    if jobs is not None:
        command += ["--jobs", str(jobs)]
    if config is not None:
        command += ["--config", config]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    # in the checkout: ``python -m`` puts the working directory first on sys.path
    done = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=directory)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr.decode()[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return seconds, cpu


def min_of_n_report(old_cpus: list, new_cpus: list) -> list:
    """The lines of the ``--min-of`` table: each side's least CPU seconds
    (and the spread above it, as a sign of how busy the machine was) and
    new/old of the minima."""
    lines = []
    for label, cpus in (("old", old_cpus), ("new", new_cpus)):
        least = min(cpus)
        lines.append(f"{label} cpu min-of-{len(cpus)} {least:.2f} s (max {max(cpus):.2f}, "
                     f"spread {(max(cpus) / least - 1) * 100:.0f} %)")
    lines.append(f"new/old cpu min-of-{min(len(old_cpus), len(new_cpus))}: {min(new_cpus) / min(old_cpus):.3f}")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", nargs="?", default=None, help="default: the pinned vLLM tree of bench/realtree.py")
    parser.add_argument("--old", default="main")
    parser.add_argument("--new", default=ROOT)
    rounds = parser.add_mutually_exclusive_group()  # (each sets how many pairs run; one report each)
    rounds.add_argument("--repeat", type=int, default=5, help="pairs of runs, medians reported (default: 5)")
    rounds.add_argument("--min-of", type=int, metavar="N",
                        help="N interleaved rounds; print only the least CPU seconds of each side and their ratio")
    parser.add_argument("--jobs", type=int, help="--jobs for both (default: cslint's own default)")
    parser.add_argument("--config", help="--config for both (e.g. bench/realtree/cslint.toml)")
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args(argv)
    pairs = args.repeat if args.min_of is None else args.min_of
    if args.config is not None:
        args.config = os.path.abspath(args.config)
    args.tree = os.path.abspath(args.tree or pinned("vllm") or parser.error("the pinned vLLM tree cannot be had; pass a tree"))
    old_times, new_times = [], []
    with checkout(args.old) as old_dir, checkout(args.new) as new_dir:
        one_run(old_dir, args.tree, args.python, args.jobs, args.config)  # warm the page cache for both
        for index in range(pairs):
            # alternate which side goes first, so neither always follows the other
            order = ((old_dir, old_times), (new_dir, new_times))
            for directory, times in (order if index % 2 == 0 else order[::-1]):
                times.append(one_run(directory, args.tree, args.python, args.jobs, args.config))
    if args.min_of is not None:
        print(f"tree: {args.tree}  (jobs={args.jobs or 'default'}; old {args.old}, new {args.new})")
        print("\n".join(min_of_n_report([c for _, c in old_times], [c for _, c in new_times])))
        return 0
    print(f"tree: {args.tree}  ({pairs} alternating pairs, jobs={args.jobs or 'default'})")
    print(f"{'version':<28} {'wall med':>9} {'min':>7} {'max':>7} {'cpu med':>8} {'min':>7} {'max':>7}")
    for label, runs in ((f"old {args.old}", old_times), (f"new {args.new}", new_times)):
        walls, cpus = [w for w, _ in runs], [c for _, c in runs]
        print(f"{label[:28]:<28} {statistics.median(walls):>9.2f} {min(walls):>7.2f} {max(walls):>7.2f} "
              f"{statistics.median(cpus):>8.2f} {min(cpus):>7.2f} {max(cpus):>7.2f}")
    for index, what in ((0, "wall"), (1, "cpu")):
        old = [run[index] for run in old_times]
        new = [run[index] for run in new_times]
        pairs = statistics.median(n / o for o, n in zip(old, new))
        print(f"new/old {what}: ratio of medians {statistics.median(new) / statistics.median(old):.3f}; "
              f"median of pair ratios {pairs:.3f} (target <= 1.10)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
