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


def one_run(directory: str, tree: str, python: str, jobs) -> tuple:
    """(wall seconds, CPU seconds of the run and its workers)."""
    env = dict(os.environ, PYTHONPATH=directory)
    command = [python, "-m", "cslint", "check", "--no-cache", "--format", "json", tree]
    if jobs is not None:
        command += ["--jobs", str(jobs)]
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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", nargs="?", default=None, help="default: the pinned vLLM tree of bench/realtree.py")
    parser.add_argument("--old", default="main")
    parser.add_argument("--new", default=ROOT)
    parser.add_argument("--repeat", type=int, default=5, help="pairs of runs (default: 5)")
    parser.add_argument("--jobs", type=int, help="--jobs for both (default: cslint's own default)")
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args(argv)
    args.tree = os.path.abspath(args.tree or pinned("vllm") or parser.error("the pinned vLLM tree cannot be had; pass a tree"))
    old_times, new_times = [], []
    with checkout(args.old) as old_dir, checkout(args.new) as new_dir:
        one_run(old_dir, args.tree, args.python, args.jobs)  # warm the page cache for both
        for index in range(args.repeat):
            # alternate which side goes first, so neither always follows the other
            order = ((old_dir, old_times), (new_dir, new_times))
            for directory, times in (order if index % 2 == 0 else order[::-1]):
                times.append(one_run(directory, args.tree, args.python, args.jobs))
    print(f"tree: {args.tree}  ({args.repeat} alternating pairs, jobs={args.jobs or 'default'})")
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
