"""Is `cslint check` output the same bytes whatever the hash seed and --jobs?

For each tree: runs of ``python -m cslint check --no-cache --format json .``
in the tree, one per (PYTHONHASHSEED, --jobs) pair (default: seeds 0-3 with
--jobs 1, 2, 1, 2), and one more run of a copy of the tree's sources in
another directory (the output must not depend on where a tree lives; skip it
with ``--no-move``; a tree whose settings file lies above it gets none), then a table: how many distinct outputs, identical or
not.  With differences, ``--keep DIR`` leaves every output there to diff.

    .venv/bin/python bench/determinism.py                   # vLLM, DeepSpeed, torch
    .venv/bin/python bench/determinism.py TREE [TREE ...]   # any trees
    .venv/bin/python bench/determinism.py --seeds 0 1 2 3 4 5 --jobs 1 2 4

Default trees: vLLM and DeepSpeed as bench/realtree.py pins them (downloaded once)
and the installed torch package.  Exit status 1 when a tree's
outputs differ.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
from realtree import pinned  # noqa: E402  (run as python bench/NAME.py: bench/ is first on sys.path)


DEFAULT_TREES = ("vllm", "deepspeed")  # pinned trees of bench/realtree.py


def default_trees() -> list:
    trees = [tree for tree in map(pinned, DEFAULT_TREES) if tree is not None]
    import importlib.util

    spec = importlib.util.find_spec("torch")
    if spec is not None and spec.submodule_search_locations:
        trees.append(list(spec.submodule_search_locations)[0])
    return trees


LAUNCH = "import sys; sys.path[0] = sys.argv.pop(1); from cslint.cli import console_main; console_main()"


def run_once(tree: str, seed: int, jobs: int) -> tuple:
    """(stdout bytes, seconds) of one cold run in ``tree``."""
    env = dict(os.environ, PYTHONHASHSEED=str(seed))
    # LAUNCH puts the checkout on sys.path itself; a PYTHONPATH such as "." would name the
    # tree, and its modules (torch's __future__.py) would shadow the standard library's
    # while site-packages' .pth files run at start-up.
    env.pop("PYTHONPATH", None)
    start = time.perf_counter()
    # Not `python -m cslint`: that puts the tree itself first on sys.path, and
    # torch's own `types.py` would shadow the standard library's.
    # --no-respect-gitignore: the installed torch lies in a virtual environment
    # that the checkout's .gitignore names.
    done = subprocess.run([sys.executable, "-c", LAUNCH, ROOT, "check", "--no-cache", "--no-respect-gitignore",
                           "--format", "json", "--jobs", str(jobs), "."],
                          cwd=tree, env=env, capture_output=True, timeout=1800)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1) or not done.stdout.strip():
        raise SystemExit(f"{tree}: cslint exited {done.returncode}\n{done.stderr.decode(errors='replace')}")
    return done.stdout, elapsed


#: what a copy of a tree keeps: the sources and the settings files cslint reads
_KEPT_SUFFIXES = (".py", ".pyi", ".toml", ".cfg", ".ini")


def _sources_only(directory: str, names: list) -> list:
    return [name for name in names if not os.path.isdir(os.path.join(directory, name))
            and not name.endswith(_KEPT_SUFFIXES) and name != ".gitignore"]


def moved_copy(tree: str, into: str) -> str:
    """A copy of ``tree``'s sources under ``into`` (a directory of another
    name, at another depth), for a run that must print the same bytes."""
    target = os.path.join(into, "moved", "elsewhere", os.path.basename(os.path.normpath(tree)) + "-copy")
    shutil.copytree(tree, target, ignore=_sources_only, symlinks=True)
    return target


def settings_above(tree: str):
    """The settings file a run in ``tree`` reads from a directory above it
    (a copy elsewhere would not read it, so its output may rightly differ),
    else None."""
    sys.path.insert(0, ROOT)
    from cslint.config import find_config_file
    found = find_config_file(tree)
    if found is None:
        return None
    inside = os.path.commonpath([os.path.realpath(tree), os.path.realpath(found)]) == os.path.realpath(tree)
    return None if inside else str(found)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trees", nargs="*")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2],
                        help="--jobs values, used in turn with the seeds")
    parser.add_argument("--keep", metavar="DIR", help="write every output to DIR")
    parser.add_argument("--no-move", action="store_true", help="skip the run of a moved copy of each tree")
    args = parser.parse_args(argv)
    trees = args.trees or default_trees()
    runs = [(seed, args.jobs[index % len(args.jobs)]) for index, seed in enumerate(args.seeds)]
    rows = []
    notes = []
    for tree in trees:
        digests = {}
        seconds = []
        findings = files = None
        planned = [(tree, seed, jobs) for seed, jobs in runs]
        scratch = None
        outside = settings_above(tree)
        if outside:
            notes.append(f"{tree}: no moved copy (its settings come from {outside}, above the tree)")
        elif not args.no_move:
            scratch = tempfile.mkdtemp(prefix="cslint-moved-")
            planned.append((moved_copy(tree, scratch), *runs[0]))
        for where, seed, jobs in planned:
            output, elapsed = run_once(where, seed, jobs)
            label = seed if where == tree else f"{seed} (moved copy)"
            seconds.append(elapsed)
            digests[(label, jobs)] = hashlib.sha256(output).hexdigest()[:12]
            if findings is None:
                report = json.loads(output)
                findings, files = len(report["findings"]), report["files"]
                if not files:
                    raise SystemExit(f"{tree}: no file checked")
            if args.keep:
                os.makedirs(args.keep, exist_ok=True)
                moved_tag = "" if where == tree else "-moved"
                name = f"{os.path.basename(os.path.normpath(tree))}-seed{seed}-jobs{jobs}{moved_tag}.json"
                with open(os.path.join(args.keep, name), "wb") as handle:
                    handle.write(output)
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
        distinct = len(set(digests.values()))
        rows.append((tree, files, findings, len(planned), distinct, "yes" if distinct == 1 else "NO",
                     sorted(seconds)[len(seconds) // 2], digests))
    moved = "" if args.no_move else f", and seed {runs[0][0]} --jobs {runs[0][1]} in a moved copy"
    print(f"runs per tree: {', '.join(f'seed {s} --jobs {j}' for s, j in runs)}{moved}")
    header = ("tree", "files", "findings", "runs", "distinct outputs", "identical", "median s")
    table = [header] + [(r[0], str(r[1]), str(r[2]), str(r[3]), str(r[4]), r[5], f"{r[6]:.1f}") for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)))
    for note in notes:
        print(note)
    for row in rows:
        if row[4] != 1:
            print(f"{row[0]}: " + ", ".join(f"seed {s} jobs {j}: {d}" for (s, j), d in row[7].items()))
    return 0 if all(row[4] == 1 for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
