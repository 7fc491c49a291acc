"""Speed and memory of `cslint check` on large trees, against a parse-only baseline and other linters.

    .venv/bin/python bench/integrations.py [--skip-pylint] [--semgrep PATH] [--trees torch,vllm]

Prints one table, all rows measured in this run, for two trees: the installed
torch package and vLLM's sources (downloaded with `pip download --no-deps vllm`
and unpacked to /tmp/vllm_src on first use).  Every row is a separate
subprocess; wall time is measured around it and peak memory is the largest
resident set of that process or any child it waited for (``os.wait4`` rusage).

Each row but pylint runs ``--repeat`` times (default 3) and shows the median
wall time and the largest peak memory.  Rows: cslint cold (`--no-cache`), cslint cold with a fresh cache directory,
cslint warm (same cache, unchanged tree), cslint `--jobs 2` (`--no-cache`),
read + `ast.parse` of every file in one process (the baseline), `ruff check
--no-cache` (default rules), `pylint --disable=all --enable=unused-import`
(slow: `--skip-pylint`), and semgrep with one pattern rule when a semgrep
executable is found.

Targets checked at the end: cslint cold <= 1.5x parse; >= 20x faster than
pylint; faster than semgrep (judged on the median ratio of ``--pairs``
alternating cslint/semgrep runs: rows measured one after another drift with
the machine, and the two tools are close on vLLM); warm <= 1 s on vLLM.

Every tool reads the same copy of each tree, outside any virtual environment:
semgrep skips paths under ``.venv``/``site-packages`` without a word (it
"scans" the installed torch package in under two seconds by reading none of
it), so the torch sources are copied to a scratch directory first.  The
semgrep row states how many files it scanned, and a run that scanned none is
not compared.  semgrep runs once untimed first: its first start in a fresh
environment sets itself up and can take minutes.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from typing import Optional

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV_BIN = os.path.dirname(sys.executable)
DEFAULT_TORCH = os.path.join(REPO, ".venv", "lib", f"python{sys.version_info[0]}.{sys.version_info[1]}", "site-packages", "torch")
DEFAULT_VLLM = "/tmp/vllm_src"

# The trees live under site-packages/.venv, which cslint excludes by default:
# a bench configuration keeps only the VCS and bytecode directories out.
BENCH_CONFIG = """\
[tool.cslint]
exclude = [".git", "__pycache__"]
"""

PARSE_ONLY = r"""
import ast, os, sys, warnings
warnings.simplefilter("ignore")
files = ok = 0
for directory, dirs, names in os.walk(sys.argv[1]):
    dirs[:] = [d for d in dirs if d not in (".git", "__pycache__")]
    for name in names:
        if name.endswith(".py"):
            files += 1
            with open(os.path.join(directory, name), "rb") as handle:
                data = handle.read()
            try:
                ast.parse(data)
                ok += 1
            except (SyntaxError, ValueError):
                pass
print(f"{files} files, {ok} parsed")
"""

SEMGREP_RULE = """\
rules:
  - id: collective-under-rank-condition
    patterns:
      - pattern-inside: |
          if $COND:
            ...
      - pattern: $DIST.all_reduce(...)
    message: collective inside a conditional
    languages: [python]
    severity: INFO
"""


@dataclass
class Row:
    tree: str
    tool: str
    wall: Optional[float] = None  # seconds
    peak_mb: Optional[float] = None
    rc: Optional[int] = None
    note: str = ""
    extra: dict = field(default_factory=dict)


def measure(command: list[str], *, cwd: Optional[str] = None, timeout: float = 600, env: Optional[dict] = None) -> tuple[float, float, int, str]:
    """(wall seconds, peak RSS MiB, exit status, stdout) of one subprocess.

    The command runs in its own session so that a timeout or an interrupt ends
    it together with every process it started.
    """
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        process = subprocess.Popen(command, cwd=cwd, stdout=out, stderr=subprocess.DEVNULL, env=env, start_new_session=True)
        finished = False
        try:
            deadline = start + timeout
            while True:
                pid, status, usage = os.wait4(process.pid, os.WNOHANG)
                if pid:
                    finished = True
                    break
                if time.perf_counter() > deadline:
                    raise TimeoutError(f"timed out after {timeout:.0f} s")
                time.sleep(0.01)
        finally:
            if not finished:
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        out.seek(0)
        stdout = out.read().decode("utf-8", "replace")
    return wall, usage.ru_maxrss / 1024.0, os.waitstatus_to_exitcode(status), stdout


def ensure_vllm(path: str) -> Optional[str]:
    if glob.glob(os.path.join(path, "vllm", "*.py")):
        return path
    download = "/tmp/vllm_dl"
    wheels = glob.glob(os.path.join(download, "vllm-*.whl"))
    if not wheels:
        print("downloading vllm (pip download --no-deps vllm) ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "vllm", "-d", download], check=False)
        wheels = glob.glob(os.path.join(download, "vllm-*.whl"))
    if not wheels:
        return None
    with zipfile.ZipFile(sorted(wheels)[-1]) as wheel:
        members = [n for n in wheel.namelist() if n.endswith(".py")]
        wheel.extractall(path, members=members)
    return path


def copy_sources(tree: str, destination: str) -> str:
    """The ``.py`` files of ``tree`` copied below ``destination`` (same
    relative paths); returns the copy's root."""
    root = os.path.join(destination, os.path.basename(tree.rstrip(os.sep)))
    for directory, dirs, names in os.walk(tree):
        dirs[:] = [d for d in dirs if d not in (".git", "__pycache__")]
        target = os.path.join(root, os.path.relpath(directory, tree))
        for name in names:
            if name.endswith(".py"):
                os.makedirs(target, exist_ok=True)
                shutil.copyfile(os.path.join(directory, name), os.path.join(target, name))
    return root


def semgrep_note(stdout: str) -> tuple:
    """(files scanned, note) from semgrep's JSON output."""
    try:
        document = json.loads(stdout)
    except json.JSONDecodeError:
        return None, "no JSON output"
    scanned = len(document.get("paths", {}).get("scanned", []))
    return scanned, f"{scanned} files scanned, {len(document.get('results', []))} matches"


def find_semgrep(explicit: Optional[str]) -> Optional[str]:
    for candidate in (explicit, shutil.which("semgrep"), os.path.join(VENV_BIN, "semgrep")):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def run_tree(name: str, tree: str, args: argparse.Namespace, workdir: str) -> list[Row]:
    rows: list[Row] = []
    # One configuration directory per tree: cslint keeps its cache next to the
    # configuration, so each tree's "fresh cache" run really starts empty.
    tree_dir = os.path.join(workdir, name)
    os.makedirs(tree_dir, exist_ok=True)
    config = os.path.join(tree_dir, "pyproject.toml")
    with open(config, "w", encoding="utf-8") as handle:
        handle.write(BENCH_CONFIG)
    cslint = [sys.executable, "-m", "cslint", "check", "--format", "json", "--config", config]
    env = dict(os.environ)

    def add(tool: str, command: list[str], *, cwd: Optional[str] = None, timeout: Optional[float] = None, parse_json: bool = False,
            semgrep_json: bool = False, repeat: Optional[int] = None, before=None) -> Row:
        """Run ``command`` ``repeat`` times (default ``--repeat``); the row
        holds the median wall time and the largest peak RSS."""
        row = Row(name, tool)
        walls: list = []
        peaks: list = []
        stdout = ""
        try:
            for _ in range(repeat or args.repeat):
                if before is not None:
                    before()
                wall, peak, row.rc, stdout = measure(command, cwd=cwd, timeout=timeout or args.timeout, env=env)
                walls.append(wall)
                peaks.append(peak)
            row.wall, row.peak_mb = statistics.median(walls), max(peaks)
            row.extra["walls"] = walls
            if semgrep_json:
                row.extra["scanned"], row.note = semgrep_note(stdout)
            elif parse_json:
                try:
                    document = json.loads(stdout)
                    row.note = f"{document.get('files', '?')} files, {len(document.get('findings', []))} findings"
                except json.JSONDecodeError:
                    row.note = f"exit {row.rc}, no JSON"
            elif stdout.strip() and len(stdout) < 200:
                row.note = stdout.strip().splitlines()[-1]
            if len(walls) > 1:
                row.note = (row.note + "; " if row.note else "") + \
                    f"median of {len(walls)} ({min(walls):.2f}-{max(walls):.2f} s)"
        except TimeoutError as exc:
            row.note = str(exc)
        except OSError as exc:
            row.note = f"could not run: {exc}"
        rows.append(row)
        print(f"  {name:<6} {tool:<34} {fmt_s(row.wall):>9} {fmt_mb(row.peak_mb):>9}  {row.note}", file=sys.stderr, flush=True)
        return row

    def empty_cache() -> None:
        shutil.rmtree(os.path.join(tree_dir, ".cslint_cache"), ignore_errors=True)

    add("read + ast.parse (baseline)", [sys.executable, "-c", PARSE_ONLY, tree])
    cold = add("cslint cold (--no-cache)", cslint + ["--no-cache", tree], parse_json=True)
    if cold.wall is None:
        # The other cslint rows would time out the same way; do not spend the time.
        for tool in ("cslint cold, fresh cache", "cslint warm", "cslint --jobs 2 (--no-cache)"):
            rows.append(Row(name, tool, note="skipped: the cold run did not finish"))
    else:
        add("cslint cold, fresh cache", cslint + [tree], cwd=tree_dir, parse_json=True, before=empty_cache)
        add("cslint warm", cslint + [tree], cwd=tree_dir, parse_json=True)
        add("cslint --jobs 2 (--no-cache)", cslint + ["--no-cache", "--jobs", "2", tree], parse_json=True)
    ruff = os.path.join(VENV_BIN, "ruff")
    add("ruff check --no-cache (defaults)", [ruff, "check", "--no-cache", "--isolated", "--exit-zero", "--quiet", tree])
    semgrep = find_semgrep(args.semgrep)
    if semgrep:
        rule = os.path.join(workdir, "semgrep-rule.yaml")
        semgrep_command = [semgrep, "scan", "--config", rule, "--metrics=off", "--disable-version-check", "--no-git-ignore",
                           "--quiet", "--json", tree]
        semgrep_row = add("semgrep (1 pattern rule)", semgrep_command, timeout=args.semgrep_timeout, semgrep_json=True)
        if args.pairs and cold.wall is not None and semgrep_row.wall is not None:
            rows.append(paired_row(name, PAIRED_SEMGREP, cslint + ["--no-cache", tree], semgrep_command, args.pairs,
                                   timeout=args.semgrep_timeout, env=env))
    else:
        rows.append(Row(name, "semgrep (1 pattern rule)", note="not installed (pass --semgrep PATH)"))
    if args.skip_pylint:
        rows.append(Row(name, "pylint unused-import", note="skipped (--skip-pylint)"))
    else:
        add(
            "pylint unused-import",
            [sys.executable, "-m", "pylint", "--disable=all", "--enable=unused-import", "--recursive=y", "--score=n", "--exit-zero", "--output-format=text", tree],
            timeout=args.pylint_timeout, repeat=1,
        )
    return rows


PAIRED_SEMGREP = "paired: cslint cold / semgrep"


def paired_row(tree: str, tool: str, a: list, b: list, pairs: int, *, timeout: float, env: dict) -> Row:
    """A and B in turn, ``pairs`` times; the row holds the median of the
    pairwise wall-time ratios A/B, which stays meaningful when the machine's
    speed drifts during the run (rows measured one after another do not)."""
    row = Row(tree, tool)
    ratios = []
    try:
        for _ in range(pairs):
            wall_a = measure(a, timeout=timeout, env=env)[0]
            wall_b = measure(b, timeout=timeout, env=env)[0]
            ratios.append(wall_a / wall_b)
    except (TimeoutError, OSError) as exc:
        row.note = str(exc)
        return row
    row.extra["ratio"] = statistics.median(ratios)
    row.extra["ratios"] = ratios
    row.note = f"ratio {row.extra['ratio']:.3f}, median of {pairs} alternating pairs ({min(ratios):.3f}-{max(ratios):.3f})"
    print(f"  {tree:<6} {tool:<34} {row.note}", file=sys.stderr, flush=True)
    return row


def fmt_s(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.2f} s"


def fmt_mb(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.0f} MiB"


def table(rows: list[Row]) -> str:
    lines = []
    header = "| tree | tool | wall | peak RSS | x parse | pylint / tool | note |"
    lines.append(header)
    lines.append("| --- | --- | ---: | ---: | ---: | ---: | --- |")
    by_tree: dict[str, dict[str, Row]] = {}
    for row in rows:
        by_tree.setdefault(row.tree, {})[row.tool] = row
    for row in rows:
        tools = by_tree[row.tree]
        parse = tools.get("read + ast.parse (baseline)")
        pylint = tools.get("pylint unused-import")
        ratio = f"{row.wall / parse.wall:.2f}x" if row.wall and parse and parse.wall else "-"
        speedup = f"{pylint.wall / row.wall:.0f}x" if row.wall and pylint and pylint.wall else "-"
        lines.append(f"| {row.tree} | {row.tool} | {fmt_s(row.wall)} | {fmt_mb(row.peak_mb)} | {ratio} | {speedup} | {row.note} |")
    return "\n".join(lines)


def verdicts(rows: list[Row]) -> list[str]:
    out = []
    by_tree: dict[str, dict[str, Row]] = {}
    for row in rows:
        by_tree.setdefault(row.tree, {})[row.tool] = row

    def check(label: str, ok: Optional[bool], detail: str) -> None:
        out.append(f"{'PASS' if ok else ('FAIL' if ok is not None else 'n/a ')}  {label}: {detail}")

    for tree, tools in by_tree.items():
        cold = tools.get("cslint cold (--no-cache)")
        parse = tools.get("read + ast.parse (baseline)")
        warm = tools.get("cslint warm")
        fresh = tools.get("cslint cold, fresh cache")
        pylint = tools.get("pylint unused-import")
        semgrep = tools.get("semgrep (1 pattern rule)")
        if cold and cold.wall is None:
            check(f"{tree}: cslint cold finishes", False, cold.note)
        if cold and cold.wall and parse and parse.wall:
            check(f"{tree}: cold <= 1.5x parse", cold.wall <= 1.5 * parse.wall, f"{cold.wall:.2f} s vs {parse.wall:.2f} s ({cold.wall / parse.wall:.2f}x)")
        if cold and cold.wall and pylint:
            if pylint.wall:
                check(f"{tree}: >= 20x faster than pylint", pylint.wall >= 20 * cold.wall, f"{pylint.wall / cold.wall:.1f}x")
            else:
                check(f"{tree}: >= 20x faster than pylint", None, pylint.note)
        paired = tools.get(PAIRED_SEMGREP)
        if cold and cold.wall and semgrep:
            if semgrep.wall and not semgrep.extra.get("scanned"):
                check(f"{tree}: faster than semgrep", None, f"semgrep scanned no file ({semgrep.note})")
            elif paired is not None and paired.extra.get("ratio"):
                ratio = paired.extra["ratio"]
                check(f"{tree}: faster than semgrep", ratio < 1.0,
                      f"cslint/semgrep {ratio:.3f} ({paired.note.split(', ', 1)[1]}); medians {cold.wall:.2f} s vs {semgrep.wall:.2f} s")
            elif semgrep.wall:
                check(f"{tree}: faster than semgrep", cold.wall < semgrep.wall, f"{cold.wall:.2f} s vs {semgrep.wall:.2f} s")
            else:
                check(f"{tree}: faster than semgrep", None, semgrep.note)
        if warm and warm.wall and fresh and fresh.wall:
            check(f"{tree}: warm <= 10% of cold", warm.wall <= 0.1 * fresh.wall, f"{warm.wall:.2f} s vs {fresh.wall:.2f} s")
        if tree == "vllm" and warm and warm.wall:
            check("vllm: warm <= 1 s", warm.wall <= 1.0, f"{warm.wall:.2f} s")
    return out


def _interrupt(signum, frame):  # noqa: ARG001 - signal handler signature
    raise KeyboardInterrupt


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--torch", default=DEFAULT_TORCH, help="the torch package directory")
    parser.add_argument("--vllm", default=DEFAULT_VLLM, help="unpacked vLLM sources (downloaded if missing)")
    parser.add_argument("--trees", default="torch,vllm", help="comma-separated: torch, vllm")
    parser.add_argument("--skip-pylint", action="store_true", help="leave out the pylint rows (several minutes each)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds allowed to each cslint/parse/ruff row")
    parser.add_argument("--pylint-timeout", type=float, default=1200)
    parser.add_argument("--semgrep", help="semgrep executable (default: found on PATH or in the venv)")
    parser.add_argument("--semgrep-timeout", type=float, default=600)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each row but pylint; the median is shown (default 3)")
    parser.add_argument("--pairs", type=int, default=5,
                        help="alternating cslint-cold/semgrep pairs for the semgrep verdict (default 5; 0: compare the medians)")
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    args = parser.parse_args(argv)
    # Run in the background, SIGINT may be ignored: make both signals end the
    # current measurement (its process group is killed in `measure`).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt)

    trees = []
    for name in [t.strip() for t in args.trees.split(",") if t.strip()]:
        if name == "torch":
            path = args.torch if os.path.isdir(args.torch) else None
        elif name == "vllm":
            path = ensure_vllm(args.vllm)
        else:
            parser.error(f"unknown tree {name!r}")
        if not path:
            print(f"bench: {name}: tree not found, skipped", file=sys.stderr)
            continue
        trees.append((name, os.path.abspath(path)))

    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="cslint-bench-") as workdir:
        with open(os.path.join(workdir, "semgrep-rule.yaml"), "w", encoding="utf-8") as handle:
            handle.write(SEMGREP_RULE)
        semgrep = find_semgrep(args.semgrep)
        if semgrep:
            print("bench: semgrep warm-up (untimed)", file=sys.stderr)
            warm_dir = os.path.join(workdir, "semgrep-warm-up")
            os.makedirs(warm_dir)
            with open(os.path.join(warm_dir, "x.py"), "w", encoding="utf-8") as handle:
                handle.write("import torch.distributed as dist\nif x:\n    dist.all_reduce(t)\n")
            try:
                measure([semgrep, "scan", "--config", os.path.join(workdir, "semgrep-rule.yaml"), "--metrics=off",
                         "--disable-version-check", "--quiet", "--json", warm_dir], timeout=args.semgrep_timeout)
            except (TimeoutError, OSError) as exc:
                print(f"bench: semgrep warm-up failed: {exc}", file=sys.stderr)
        for name, path in trees:
            copy = copy_sources(path, os.path.join(workdir, "sources"))
            print(f"bench: {name}: {path} (copied to {copy})", file=sys.stderr)
            rows.extend(run_tree(name, copy, args, workdir))

    print(f"cslint integrations bench ({os.cpu_count()} CPUs; peak RSS = largest process of the run)\n")
    print(table(rows))
    print()
    for line in verdicts(rows):
        print(line)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump([row.__dict__ for row in rows], handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
