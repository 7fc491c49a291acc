"""Which files does `cslint check DIR` parse, and what would parsing all of them cost?

cslint parses the files named on the command line and, in a directory, the
files the byte prefilter selects: those that may hold a collective call site
or call a function that issues one.  A syntax or encoding error is reported
(CSL001) in those files.  The alternative, syntax-checking every file,
costs one ``compile`` per file skipped today: this script measures both in
the same run, so the decision rests on figures from one machine state.

Per tree, in rounds (the rows of a round run one after another, the columns
are medians over rounds, the ratios medians of same-round ratios):

* read + ``ast.parse`` of every file, one process (the speed bar's baseline);
* ``cslint check --no-cache`` as a fresh process (default ``--jobs``), as an
  installed cslint runs: its byte code compiled ahead (``pip install`` does
  that; here into a ``PYTHONPYCACHEPREFIX`` folder of this run), and beside it
  the same run with no byte code at all (``PYTHONDONTWRITEBYTECODE`` with no
  cache, as in a checkout on a machine that sets it): every cslint module is
  compiled at start-up there, serial time a user's run does not pay;
* read + ``ast.parse`` of only the files cslint does not parse, one process;
* "every file checked": cslint plus that rest spread over cslint's workers,
  the least a full syntax check could cost (perfect parallelism, no overhead).

Bar: cold lint (as installed) <= 1.0x read + parse.

    .venv/bin/python bench/syntax_coverage.py [TREE ...] [--rounds 3]

Default trees: vLLM as bench/realtree.py pins it (downloaded once) and the installed torch.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
from realtree import pinned  # noqa: E402  (run as python bench/NAME.py: bench/ is first on sys.path)


DEFAULT_TREES = ("vllm",)  # pinned trees of bench/realtree.py

# The files cslint parses: its workers' entry point, wrapped, in one process.
RECORD = """\
import json, sys
sys.path[0] = sys.argv[1]
from cslint.engine import workers
from cslint.api import check_paths
from cslint.engine.discovery import DiscoveryOptions
parsed = set()
extract = workers.extract
def recording(job, context, *rest):
    parsed.add(job.path)
    return extract(job, context, *rest)
workers.extract = recording
result = check_paths([sys.argv[2]], cache=False, jobs=1, discovery=DiscoveryOptions(respect_gitignore=False))
print(json.dumps({"parsed": sorted(parsed), "files": result.files,
                  "csl001": sum(f.code == "CSL001" for f in result.findings)}))
"""
LAUNCH = "import sys; sys.path[0] = sys.argv.pop(1); from cslint.cli import console_main; console_main()"


def default_trees() -> list:
    trees = [tree for tree in map(pinned, DEFAULT_TREES) if tree is not None]
    import importlib.util

    spec = importlib.util.find_spec("torch")
    if spec is not None and spec.submodule_search_locations:
        trees.append(list(spec.submodule_search_locations)[0])
    return trees


def python_files(tree: str) -> list:
    out = []
    for directory, dirs, files in os.walk(tree):
        dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", ".git"))
        out.extend(os.path.join(directory, name) for name in sorted(files) if name.endswith(".py"))
    return out


def read_and_parse(files: list) -> tuple:
    """(seconds, files that do not parse)"""
    start = time.perf_counter()
    failures = 0
    for path in files:
        with open(path, "rb") as handle:
            data = handle.read()
        try:
            ast.parse(data, filename=path)
        except (SyntaxError, ValueError):
            failures += 1
    return time.perf_counter() - start, failures


def bytecode_environments(prefix: str) -> tuple:
    """(as installed, no byte code): the environments of the two cold runs.

    The first reads byte code from ``prefix``: cslint's, compiled ahead
    (compileall, as ``pip install`` does), and that of the standard library
    and packages it imports, written there by one warm-up check of the bundled
    example (a ``PYTHONPYCACHEPREFIX`` hides the ``__pycache__`` folders that
    an installation holds).  The second writes and reads none."""
    installed = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    installed["PYTHONPYCACHEPREFIX"] = prefix
    compiled = subprocess.run([sys.executable, "-c", "import compileall, sys; sys.exit(not compileall.compile_dir("
                               "sys.argv[1], quiet=1))", os.path.join(ROOT, "cslint")],
                              env=installed, capture_output=True)
    if compiled.returncode != 0:
        raise SystemExit(f"compileall failed:\n{compiled.stdout.decode(errors='replace')[-2000:]}")
    cslint_cold(os.path.join(ROOT, "examples"), installed)
    uncompiled = {key: value for key, value in os.environ.items() if key != "PYTHONPYCACHEPREFIX"}
    uncompiled["PYTHONDONTWRITEBYTECODE"] = "1"
    return installed, uncompiled


def cslint_cold(tree: str, environment: dict) -> float:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", LAUNCH, ROOT, "check", "--no-cache", "--no-respect-gitignore",
                           "--format", "json", tree], capture_output=True, cwd=ROOT, env=environment)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"cslint failed on {tree}:\n{done.stderr.decode(errors='replace')[-2000:]}")
    return elapsed


def default_jobs() -> int:
    try:
        return max(1, min(len(os.sched_getaffinity(0)), 8))
    except (AttributeError, OSError):
        return max(1, min(os.cpu_count() or 1, 8))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trees", nargs="*")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    jobs = default_jobs()
    rows = []
    bytecode_prefix = tempfile.mkdtemp(prefix="cslint-bytecode-")
    installed, uncompiled = bytecode_environments(bytecode_prefix)
    for tree in args.trees or default_trees():
        tree = os.path.realpath(tree)
        files = python_files(tree)
        recorded = subprocess.run([sys.executable, "-c", RECORD, ROOT, tree], capture_output=True, text=True)
        if recorded.returncode != 0:
            raise SystemExit(recorded.stderr[-2000:])
        record = json.loads(recorded.stdout)
        parsed = set(record["parsed"])
        rest = [path for path in files if os.path.realpath(path) not in parsed]
        baseline, lint, lint_uncompiled, remainder, ratios, full_ratios = [], [], [], [], [], []
        failures_all = failures_rest = 0
        for round_ in range(args.rounds):
            # alternate the order: the machine's speed drifts
            first_parse = round_ % 2 == 0
            if first_parse:
                seconds, failures_all = read_and_parse(files)
            cold = cslint_cold(tree, installed)
            lint_uncompiled.append(cslint_cold(tree, uncompiled))
            if not first_parse:
                seconds, failures_all = read_and_parse(files)
            rest_seconds, failures_rest = read_and_parse(rest)
            baseline.append(seconds)
            lint.append(cold)
            remainder.append(rest_seconds)
            ratios.append(cold / seconds)
            full_ratios.append((cold + rest_seconds / jobs) / seconds)
        rows.append({
            "tree": tree, "files": len(files), "parsed": len(parsed), "unparsable": failures_all,
            "unparsable_unparsed": failures_rest, "csl001": record["csl001"],
            "parse": statistics.median(baseline), "cold": statistics.median(lint),
            "cold_uncompiled": statistics.median(lint_uncompiled), "rest": statistics.median(remainder), "ratio": statistics.median(ratios),
            "full_ratio": statistics.median(full_ratios),
        })
    shutil.rmtree(bytecode_prefix, ignore_errors=True)
    print(f"{args.rounds} rounds, --jobs {jobs} (cslint's default here), medians; ratios: medians of same-round ratios;"
          " cslint cold as installed (byte code compiled ahead), and with no byte code")
    header = ("tree", "files", "parsed by cslint", "read+parse all", "cslint cold", "ratio", "no byte code",
              "parse of the rest", "every file checked (at least)", "ratio", "unparsable: all / not parsed")
    table = [header]
    for r in rows:
        table.append((r["tree"], str(r["files"]), str(r["parsed"]), f"{r['parse']:.2f} s", f"{r['cold']:.2f} s",
                      f"{r['ratio']:.2f}x", f"{r['cold_uncompiled']:.2f} s", f"{r['rest']:.2f} s", f"{r['cold'] + r['rest'] / jobs:.2f} s",
                      f"{r['full_ratio']:.2f}x", f"{r['unparsable']} / {r['unparsable_unparsed']}"))
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)))
    for r in rows:
        verdict = "within" if r["full_ratio"] <= 1.0 else "over"
        print(f"{os.path.basename(r['tree'])}: checking every file would be {verdict} the 1.0x bar "
              f"({r['full_ratio']:.2f}x at least); cslint as it is: {r['ratio']:.2f}x; "
              f"CSL001 findings: {r['csl001']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
