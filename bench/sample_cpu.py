"""Where the CPU of one ``cslint check --jobs 1`` goes, sampled by phase and function.

Runs ``cslint check --no-cache --jobs 1 --format json TREE`` in a fresh
process of the measured checkout with a ``SIGPROF`` timer (process CPU, one
sample every ``--interval`` ms) that records the Python stack of each
sample.  Unlike cProfile it adds no cost per call, so its shares are those
of an ordinary run (cProfile inflates small functions several times); with
``--jobs 1`` the extraction runs in the run's own process, so one sampler
sees the whole run.

Prints four tables, each as a share of all samples:

- phases: each sample counted once, in the first phase of ``PHASES`` whose
  function is on its stack (imports, the pending summaries the whole-tree
  pass fills, the pass itself, ``ast.parse``, the extraction, reading, the
  prefilter; "other" for the rest);
- parts: named functions, counted inclusively (a sample inside ``solve``
  inside the pass counts for both), so the parts of one phase may overlap;
- self: the functions the samples were in (leaf frames);
- inclusive: every function on the stack, once per sample.

Sampling is noisy: two runs of vLLM differ by about a point on a share of
ten.  Compare shares of runs on the same machine, not seconds on a busy one.

    .venv/bin/python bench/sample_cpu.py [TREE] [--new DIR] [--top N] [--interval MS] [--keep FILE]
    .venv/bin/python bench/sample_cpu.py --load FILE        (a --keep'd sample, tabled again)

Default tree: vLLM as bench/realtree.py pins it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

#: runs in the measured checkout: samples one whole `cslint check` and dumps
#: {"cpu": seconds, "stacks": {"key;key;...": samples}} (outermost first)
_SAMPLED_RUN = r'''
import collections, gc, json, os, signal, sys, time
from cslint.cli import main
# as `cslint` itself runs (cli.console_main): without the cyclic collector; left
# on, check_paths would turn it back on and one full collection after the run
# would be sampled as part of it
gc.disable()
sys.argv = ["cslint", "check", "--no-cache", "--jobs", "1", "--format", "json", "-o", os.devnull, TREE]
stacks = collections.Counter()
labels = {}
def label(code):
    key = labels.get(code)
    if key is None:
        key = labels[code] = f"{'/'.join(code.co_filename.split('/')[-2:])}:{code.co_firstlineno} {code.co_name}"
    return key
def sample(signum, frame):
    keys = []
    while frame is not None:
        keys.append(label(frame.f_code))
        frame = frame.f_back
    keys.reverse()
    stacks[";".join(keys)] += 1
signal.signal(signal.SIGPROF, sample)
signal.setitimer(signal.ITIMER_PROF, INTERVAL, INTERVAL)
started = time.process_time()
try:
    main()
except SystemExit:
    pass
signal.setitimer(signal.ITIMER_PROF, 0, 0)
cpu = time.process_time() - started
with open(OUTPUT, "w") as out:
    json.dump({"cpu": cpu, "stacks": stacks}, out)
'''

#: (phase, label suffix) outermost first: a sample belongs to the first
#: phase, in this order, one of whose functions is on its stack
PHASES = (
    ("imports", "importlib._bootstrap> _find_and_load"),
    ("whole-tree pass: pending summaries filled", "analysis/records.py fill_pending"),
    ("whole-tree pass", "engine/run.py _analysis_findings"),
    ("ast.parse", "/ast.py parse"),
    ("extraction", "engine/workers.py _extract"),
    ("reading", "engine/discovery.py read_file"),
    ("prefilter", "engine/gather.py chosen"),
)

#: (part, label suffix): functions whose inclusive share is worth a row
PARTS = (
    ("extraction", "engine/workers.py _extract"),
    ("  deep dataflow and sites (deep_variant)", "analysis/deep.py deep_variant"),
    ("    dataflow (Dataflow.__init__)", "analysis/dataflow.py __init__"),
    ("  summary walk (SummaryWalk.variant)", "analysis/summary.py variant"),
    ("  scan_calls", "analysis/functionscan.py scan_calls"),
    ("  _func_facts", "analysis/facts.py _func_facts"),
    ("  guards.conds_of", "analysis/guards.py conds_of"),
    ("whole-tree pass", "engine/run.py _analysis_findings"),
    ("  Program.__init__", "analysis/program.py __init__"),
    ("  solve", "analysis/program.py solve"),
    ("  demanded", "analysis/demand.py demanded"),
    ("  fill_pending", "analysis/records.py fill_pending"),
    ("ast.parse", "/ast.py parse"),
    ("reading (read_file)", "engine/discovery.py read_file"),
    ("prefilter (chosen)", "engine/gather.py chosen"),
)


def _matches(key: str, suffix: str) -> bool:
    """``key`` is ``dir/file.py:line name``; ``suffix`` names the end of
    ``dir/file.py`` and the name, the line left out (so the table survives
    edits above a function)."""
    where, _, name = key.rpartition(" ")  # "<frozen importlib._bootstrap>" holds a space
    want_where, _, want_name = suffix.rpartition(" ")
    return name == want_name and where.rsplit(":", 1)[0].endswith(want_where)


def sample_run(directory: str, tree: str, python: str, interval_ms: float) -> dict:
    with tempfile.TemporaryDirectory() as scratch:
        output = os.path.join(scratch, "sample.json")
        code = (_SAMPLED_RUN.replace("TREE", repr(tree)).replace("OUTPUT", repr(output))
                .replace("INTERVAL", repr(interval_ms / 1000.0)))
        env = dict(os.environ, PYTHONPATH=directory, PYTHONHASHSEED="0")
        done = subprocess.run([python, "-c", code], env=env, cwd=directory, capture_output=True, text=True)
        if done.returncode != 0 or not os.path.exists(output):
            raise SystemExit(f"sampled run in {directory} failed ({done.returncode}):\n{done.stderr[-2000:]}")
        with open(output) as handle:
            return json.load(handle)


def tables(sample: dict, top: int) -> str:
    stacks = {tuple(stack.split(";")): count for stack, count in sample["stacks"].items()}
    total = sum(stacks.values()) or 1
    rows = [f"CPU {sample['cpu']:.2f} s, {total:,} samples"]

    def share(count: int) -> str:
        return f"{100.0 * count / total:6.1f} %"

    phases: dict = {}
    for stack, count in stacks.items():
        phase = next((name for name, suffix in PHASES if any(_matches(key, suffix) for key in stack)), "other")
        phases[phase] = phases.get(phase, 0) + count
    rows += ["", "phase (each sample once, in the first phase of PHASES on its stack)"]
    for name, _suffix in PHASES + (("other", ""),):
        rows.append(f"{share(phases.get(name, 0))}  {name}")

    rows += ["", "part (inclusive; parts overlap)"]
    for name, suffix in PARTS:
        count = sum(c for stack, c in stacks.items() if any(_matches(key, suffix) for key in stack))
        # no sample under a part's function: most likely it was moved or renamed, and its row would read 0 %
        rows.append(f"{share(count)}  {name}" + ("" if count else f"  (no frame is {suffix!r}: moved or renamed?)"))

    leaf: dict = {}
    inclusive: dict = {}
    for stack, count in stacks.items():
        leaf[stack[-1]] = leaf.get(stack[-1], 0) + count
        for key in set(stack):
            inclusive[key] = inclusive.get(key, 0) + count
    rows += ["", f"self (the {top} functions most samples were in)"]
    rows += [f"{share(c)}  {key}" for key, c in sorted(leaf.items(), key=lambda kv: (-kv[1], kv[0]))[:top]]
    rows += ["", f"inclusive (the {top} functions most samples were under)"]
    rows += [f"{share(c)}  {key}" for key, c in sorted(inclusive.items(), key=lambda kv: (-kv[1], kv[0]))[:top]]
    return "\n".join(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", nargs="?", default=None, help="default: the pinned vLLM tree of bench/realtree.py")
    parser.add_argument("--new", default=ROOT, help="the checkout to sample (default: this one)")
    parser.add_argument("--top", type=int, default=40, help="rows of the self and inclusive tables")
    parser.add_argument("--interval", type=float, default=3.0, help="ms of process CPU between samples")
    parser.add_argument("--keep", help="write the sample (stacks and CPU) to this JSON file")
    parser.add_argument("--load", help="table a sample a --keep wrote instead of running one")
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args(argv)
    if args.load:
        with open(args.load) as handle:
            sample = json.load(handle)
    else:
        sys.path.insert(0, HERE)
        from realtree import pinned  # noqa: E402  (bench/ on the path: run as python bench/NAME.py)

        tree = os.path.abspath(args.tree or pinned("vllm") or parser.error("the pinned vLLM tree cannot be had; pass a tree"))
        print(f"tree: {tree}  (--jobs 1, --no-cache, one sample per {args.interval:g} ms of CPU)")
        sample = sample_run(os.path.abspath(args.new), tree, args.python, args.interval)
        if args.keep:
            with open(args.keep, "w") as handle:
                json.dump(sample, handle)
    print(tables(sample, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
