"""How fast is `cslint check` compared with merely parsing the same files?

Measured in one run on one tree (default: the installed torch package):

* baseline: read every ``.py`` file and ``ast.parse`` it, one process;
* cslint: ``python -m cslint.cli check TREE --format json`` as a fresh
  subprocess (or ``--api`` to call ``cslint.api.check_paths`` in a fresh
  process), wall time and peak resident memory of its process tree.

Targets: ratio cslint/baseline <= 1.5, peak RSS <= 500 MB.

    .venv/bin/python bench/lint_speed.py [TREE] [--jobs N] [--api]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def default_tree() -> str:
    import importlib.util

    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("torch is not installed; pass a tree to measure")
    return list(spec.submodule_search_locations)[0]


def python_files(tree: str) -> list:
    out = []
    for directory, dirs, files in os.walk(tree):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".py"):
                out.append(os.path.join(directory, name))
    return out


def parse_baseline(files: list) -> tuple:
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


def _tree_rss_kb(pid: int) -> int:
    """Resident memory of a process and all its descendants (Linux /proc)."""
    total = 0
    stack = [pid]
    seen = set()
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        try:
            with open(f"/proc/{current}/status") as handle:
                for line in handle:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
                        break
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as handle:
                    stack.extend(int(c) for c in handle.read().split())
        except (OSError, ValueError):
            continue
    return total


def run_cslint(tree: str, jobs, use_api: bool) -> dict:
    python = sys.executable
    if use_api:
        code = ("import sys, json; from cslint.api import check_paths; "
                f"r = check_paths([{tree!r}], jobs={jobs!r}); "
                "print(json.dumps(r.to_json()))")
        command = [python, "-c", code]
    else:
        command = [python, "-m", "cslint.cli", "check", tree, "--format", "json", "--no-cache"]
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, env=env)
    peak = [0]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], _tree_rss_kb(process.pid))
            done.wait(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stdout, stderr = process.communicate()
    elapsed = time.perf_counter() - start
    done.set()
    sampler.join()
    result = {"seconds": elapsed, "peak_mb": peak[0] / 1024, "returncode": process.returncode,
              "findings": None, "errors": None, "files": None, "stderr": stderr.decode(errors="replace")[-2000:]}
    try:
        payload = json.loads(stdout)
        result.update(findings=len(payload["findings"]), errors=len(payload["errors"]), files=payload["files"])
    except (ValueError, KeyError):
        pass
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", nargs="?", default=None)
    parser.add_argument("--jobs", type=int, default=None, help="worker processes (--api only)")
    parser.add_argument("--api", action="store_true", help="time check_paths in a fresh process instead of the CLI")
    args = parser.parse_args(argv)
    tree = args.tree or default_tree()
    files = python_files(tree)
    baseline, failures = parse_baseline(files)
    measured = run_cslint(tree, args.jobs, args.api)
    ratio = measured["seconds"] / baseline if baseline else float("inf")
    rows = [
        ("tree", tree),
        ("python files", f"{len(files)} ({failures} do not parse)"),
        ("read + ast.parse (1 process)", f"{baseline:.2f} s"),
        ("cslint check" + (" (api)" if args.api else " (cli)"), f"{measured['seconds']:.2f} s"),
        ("ratio (target <= 1.5)", f"{ratio:.2f}" + ("  OK" if ratio <= 1.5 else "  OVER")),
        ("peak RSS of cslint's processes (target <= 500 MB)",
         f"{measured['peak_mb']:.0f} MB" + ("  OK" if measured["peak_mb"] <= 500 else "  OVER")),
        ("cslint exit code / findings / errors",
         f"{measured['returncode']} / {measured['findings']} / {measured['errors']}"),
        ("cores", str(os.cpu_count())),
    ]
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"{label:<{width}}  {value}")
    if measured["returncode"] not in (0, 1):
        print("\ncslint failed:\n" + measured["stderr"], file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
