"""How fast is one version of cslint next to another, on the same tree?

Both versions (a directory holding a checkout, or a git revision exported
with ``git archive``) run ``cslint check --no-cache --format json TREE`` as
fresh processes with this interpreter, alternately (old, new, old, new, ...),
so a machine that gets busier or quieter during the measurement slows both
alike.  The table gives each side's median and the ratio of the medians, and
the median of the per-pair ratios.  Target for a behaviour-preserving
restructuring: new/old <= 1.10.

    .venv/bin/python bench/commit_speed.py --old 19846d2 --new . --repeat 7 /work/trees/vllm
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@contextlib.contextmanager
def checkout(version: str):
    if os.path.isdir(version):
        yield os.path.abspath(version)
        return
    with tempfile.TemporaryDirectory(prefix="cslint-speed-") as tmp:
        archive = subprocess.run(["git", "-C", ROOT, "archive", version], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        yield tmp


def one_run(directory: str, tree: str, python: str, jobs) -> float:
    env = dict(os.environ, PYTHONPATH=directory)
    command = [python, "-m", "cslint", "check", "--no-cache", "--format", "json", tree]
    if jobs is not None:
        command += ["--jobs", str(jobs)]
    start = time.perf_counter()
    # in the checkout: ``python -m`` puts the working directory first on sys.path
    done = subprocess.run(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=directory)
    seconds = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr.decode()[-2000:]}")
    return seconds


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", nargs="?", default="/work/trees/vllm")
    parser.add_argument("--old", default="main")
    parser.add_argument("--new", default=ROOT)
    parser.add_argument("--repeat", type=int, default=5, help="pairs of runs (default: 5)")
    parser.add_argument("--jobs", type=int, help="--jobs for both (default: cslint's own default)")
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args(argv)
    args.tree = os.path.abspath(args.tree)
    old_times, new_times = [], []
    with checkout(args.old) as old_dir, checkout(args.new) as new_dir:
        one_run(old_dir, args.tree, args.python, args.jobs)  # warm the page cache for both
        for index in range(args.repeat):
            # alternate which side goes first, so neither always follows the other
            order = ((old_dir, old_times), (new_dir, new_times))
            for directory, times in (order if index % 2 == 0 else order[::-1]):
                times.append(one_run(directory, args.tree, args.python, args.jobs))
    pair_ratios = [n / o for o, n in zip(old_times, new_times)]
    print(f"tree: {args.tree}  ({args.repeat} alternating pairs, jobs={args.jobs or 'default'})")
    print(f"{'version':<28} {'median s':>9} {'min s':>7} {'max s':>7}  runs")
    for label, times in ((f"old {args.old}", old_times), (f"new {args.new}", new_times)):
        print(f"{label[:28]:<28} {statistics.median(times):>9.2f} {min(times):>7.2f} {max(times):>7.2f}  "
              + " ".join(f"{t:.2f}" for t in times))
    ratio = statistics.median(new_times) / statistics.median(old_times)
    print(f"new/old: ratio of medians {ratio:.3f}; median of pair ratios {statistics.median(pair_ratios):.3f}"
          f" (target <= 1.10)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
