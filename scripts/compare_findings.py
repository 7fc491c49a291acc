"""Compare the findings of two versions of cslint on the same trees.

A behaviour-preserving change must leave every finding as it was.  This runs
``cslint check --no-cache --format json`` of an *old* and a *new* version on
the same trees, one after the other, and compares the findings as sets (each
finding is one canonical JSON text; the lists are sorted before comparing, so
an order that depends on the hash seed or on the worker count does not count
as a change).  With ``--full`` it also compares every field of every
``cslint.model.Finding`` through the library API (the JSON report leaves some
out), which catches a changed callee, source or guard span.

A version is a directory holding a cslint checkout (run as it is on disk) or a
git revision (exported with ``git archive`` into a temporary directory).  Both
run with this interpreter, the checkout first on ``PYTHONPATH``.

    .venv/bin/python scripts/compare_findings.py --old main --new .
    .venv/bin/python scripts/compare_findings.py --old HEAD~1 --twice tests/corpus
    .venv/bin/python scripts/compare_findings.py --old main --new . --full

Default trees: vLLM pinned by ``bench/realtree.py``, the installed torch
package, ``tests/corpus`` and ``tests/fixtures``.  ``--twice`` first runs the
old version twice and checks that the two runs agree (a comparison of a
non-deterministic analyser proves nothing).  Exit status: 0 when every tree
agrees, 1 otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from realtree import pinned  # noqa: E402  (the pinned real trees)


_FULL_DRIVER = r"""
import dataclasses, json, sys
from cslint.api import check_paths
options = {}
try:  # trees inside a git work tree may be git-ignored (a venv's torch)
    try:
        from cslint.engine.discovery import DiscoveryOptions
    except ImportError:
        from cslint.discovery import DiscoveryOptions
    options["discovery"] = DiscoveryOptions(respect_gitignore=False)
except ImportError:
    pass
result = check_paths([sys.argv[1]], jobs=int(sys.argv[2]), cache=False, **options)
out = [dataclasses.asdict(f) for f in result.findings]
json.dump({"findings": out, "errors": [dataclasses.asdict(e) for e in result.errors]}, sys.stdout, default=str)
"""


def default_trees() -> list:
    trees = []
    vllm = pinned("vllm")
    if vllm is not None:
        trees.append(vllm)
    spec = importlib.util.find_spec("torch")
    if spec is not None and spec.submodule_search_locations:
        trees.append(list(spec.submodule_search_locations)[0])
    for corpus in ("tests/corpus", "tests/fixtures"):
        trees.append(os.path.join(ROOT, corpus))
    return trees


def _version_check(directory: str, python: str) -> str:
    """Where ``cslint`` comes from when run in ``directory`` (a run that
    imported another checkout would compare a version with itself)."""
    found = subprocess.run([python, "-c", "import cslint; print(cslint.__file__)"], capture_output=True, text=True,
                           cwd=directory, env=dict(os.environ, PYTHONPATH=directory)).stdout.strip()
    if not os.path.realpath(found).startswith(os.path.realpath(directory) + os.sep):
        raise SystemExit(f"running in {directory} imports cslint from {found}")
    return found


@contextlib.contextmanager
def checkout(version: str):
    """A directory holding ``version``: itself when it is a directory, else a
    ``git archive`` export of that revision (removed afterwards)."""
    if os.path.isdir(version):
        yield os.path.abspath(version)
        return
    with tempfile.TemporaryDirectory(prefix="cslint-compare-") as tmp:
        archive = subprocess.run(["git", "-C", ROOT, "archive", version], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        yield tmp


_GITIGNORE_FLAG: dict = {}


def _gitignore_flag(directory: str, python: str, env: dict) -> list:
    """``--no-respect-gitignore`` where the version has it: a tree inside a
    git work tree (the torch of a checkout's own venv) is not skipped."""
    if directory not in _GITIGNORE_FLAG:
        usage = subprocess.run([python, "-m", "cslint", "check", "--help"], env=env, capture_output=True,
                               cwd=directory)
        _GITIGNORE_FLAG[directory] = ["--no-respect-gitignore"] if b"--no-respect-gitignore" in usage.stdout else []
    return _GITIGNORE_FLAG[directory]


def run_version(directory: str, tree: str, *, python: str, seed: str, jobs: int, full: bool) -> tuple:
    """(canonical findings, canonical errors, seconds) of one run."""
    env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=directory)
    env.pop("CSLINT_SANITIZE", None)
    if full:
        command = [python, "-c", _FULL_DRIVER, tree, str(jobs)]
    else:
        command = [python, "-m", "cslint", "check", "--no-cache", "--format", "json", "--jobs", str(jobs),
                   *_gitignore_flag(directory, python, env), tree]
    start = time.perf_counter()
    # run in the checkout: ``python -m``/``-c`` put the working directory
    # first on sys.path, ahead of PYTHONPATH
    done = subprocess.run(command, env=env, capture_output=True, cwd=directory)
    seconds = time.perf_counter() - start
    try:
        report = json.loads(done.stdout)
    except ValueError:
        raise SystemExit(f"{' '.join(command)} (in {directory}) gave no JSON, exit {done.returncode}:\n"
                         f"{done.stderr.decode(errors='replace')[-3000:]}")
    findings = sorted(json.dumps(f, sort_keys=True, ensure_ascii=False) for f in report["findings"])
    errors = sorted(json.dumps(e, sort_keys=True, ensure_ascii=False) for e in report.get("errors", []))
    return findings, errors, seconds


def _identity(text: str) -> tuple:
    finding = json.loads(text)
    return (finding.get("path"), finding.get("line"), finding.get("column"), finding.get("code"),
            finding.get("function"))


def describe_difference(old: list, new: list, limit: int) -> list:
    """Readable lines for the findings only one side has; a finding at the
    same place on both sides is shown field by field."""
    old_only = sorted(set(old) - set(new))
    new_only = sorted(set(new) - set(old))
    by_place_old = {_identity(t): json.loads(t) for t in old_only}
    by_place_new = {_identity(t): json.loads(t) for t in new_only}
    lines = []
    for place in sorted(set(by_place_old) | set(by_place_new), key=repr)[:limit]:
        before, after = by_place_old.get(place), by_place_new.get(place)
        where = f"{place[0]}:{place[1]}:{place[2]} {place[3]} in {place[4]}"
        if before is None:
            lines.append(f"  + {where}: {after.get('message', '')}")
        elif after is None:
            lines.append(f"  - {where}: {before.get('message', '')}")
        else:
            lines.append(f"  ~ {where}")
            for key in sorted(set(before) | set(after)):
                if before.get(key) != after.get(key):
                    lines.append(f"      {key}: {json.dumps(before.get(key))[:300]}")
                    lines.append(f"   -> {key}: {json.dumps(after.get(key))[:300]}")
    hidden = len(set(by_place_old) | set(by_place_new)) - limit
    if hidden > 0:
        lines.append(f"  ... and {hidden} more")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trees", nargs="*", help="trees to check (default: vLLM, torch, the test corpora)")
    parser.add_argument("--old", default="main", help="directory or git revision (default: main)")
    parser.add_argument("--new", default=ROOT, help="directory or git revision (default: this checkout)")
    parser.add_argument("--python", default=sys.executable, help="interpreter that runs both versions")
    parser.add_argument("--seed", default="0", help="PYTHONHASHSEED for every run (default: 0)")
    parser.add_argument("--jobs", type=int, default=1, help="--jobs for every run (default: 1)")
    parser.add_argument("--full", action="store_true", help="compare every Finding field through the API")
    parser.add_argument("--twice", action="store_true", help="run the old version twice first; they must agree")
    parser.add_argument("--out", help="keep each run's sorted findings in this directory")
    parser.add_argument("--limit", type=int, default=20, help="differences shown per tree (default: 20)")
    args = parser.parse_args(argv)
    trees = [os.path.abspath(t) for t in args.trees] or default_trees()
    options = dict(python=args.python, seed=args.seed, jobs=args.jobs, full=args.full)
    mode = "API, every field" if args.full else "cslint check --no-cache --format json"
    print(f"old={args.old} new={args.new} ({mode}, PYTHONHASHSEED={args.seed}, --jobs {args.jobs})")
    print(f"{'tree':<60} {'old':>6} {'new':>6} {'-old':>6} {'+new':>6} {'old s':>7} {'new s':>7}  verdict")
    failed = False
    with checkout(args.old) as old_dir, checkout(args.new) as new_dir:
        _version_check(old_dir, args.python)
        _version_check(new_dir, args.python)
        for tree in trees:
            old, old_errors, old_seconds = run_version(old_dir, tree, **options)
            if args.twice:
                again, again_errors, _ = run_version(old_dir, tree, **options)
                if (again, again_errors) != (old, old_errors):
                    print(f"{tree}: two runs of the old version disagree; no comparison is possible")
                    for line in describe_difference(old, again, args.limit):
                        print(line)
                    failed = True
                    continue
            new, new_errors, new_seconds = run_version(new_dir, tree, **options)
            if args.out:
                os.makedirs(args.out, exist_ok=True)
                name = tree.strip("/").replace("/", "_")
                for side, findings in (("old", old), ("new", new)):
                    with open(os.path.join(args.out, f"{side}_{name}.json"), "w", encoding="utf-8") as handle:
                        handle.write("[\n" + ",\n".join(findings) + "\n]\n")
            same = old == new and old_errors == new_errors
            failed |= not same
            label = tree if len(tree) <= 60 else "..." + tree[-57:]
            print(f"{label:<60} {len(old):>6} {len(new):>6} {len(set(old) - set(new)):>6} "
                  f"{len(set(new) - set(old)):>6} {old_seconds:>7.1f} {new_seconds:>7.1f}  "
                  f"{'identical' if same else 'DIFFERENT'}")
            if not same:
                for line in describe_difference(old, new, args.limit):
                    print(line)
                if old_errors != new_errors:
                    print(f"  errors differ: {len(old_errors)} -> {len(new_errors)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
