"""Where the wall clock of one cold ``cslint check`` goes, process by process.

Runs ``cslint check --no-cache --format json TREE`` once as a fresh process
with ``CSLINT_TIMELINE`` set (:mod:`cslint.engine.timeline`), then prints,
for each phase of the run's own process (seconds from the launch), its
wall clock, the run's CPU, and how long each worker and the ordering
helper worked meanwhile; a core a worker leaves idle through a phase of the
run's process is what a cold run loses to the serial part.  Ratios of
phases within one run hold on a loaded machine; seconds do not.

    .venv/bin/python bench/timeline.py [TREE] [--jobs N] [--config FILE] [--spans] [--keep FILE]

Default tree: vLLM as bench/realtree.py pins it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
from realtree import pinned  # noqa: E402  (run as python bench/NAME.py: bench/ is first on sys.path)

LAUNCH = "import sys; sys.path[0] = sys.argv.pop(1); from cslint.cli import console_main; console_main()"

#: the phases of the run's process shown as rows, outermost first (the
#: others are shown inside the row they fall in)
TOP = ("discovery", "workers forked", "gather", "whole-tree pass")


def run(tree: str, jobs, config, keep, findings=None) -> tuple:
    """(launch, exit, spans) of one run: the monotonic times around the
    process, and its processes' spans."""
    path = keep or tempfile.mktemp(prefix="cslint-timeline-", suffix=".jsonl")
    if os.path.exists(path):
        os.unlink(path)
    command = [sys.executable, "-c", LAUNCH, ROOT, "check", "--no-cache", "--no-respect-gitignore",
               "--format", "json", tree]
    if jobs is not None:
        command += ["--jobs", str(jobs)]
    if config:
        command += ["--config", config]
    environment = dict(os.environ, CSLINT_TIMELINE=path)
    launch = time.monotonic()
    done = subprocess.run(command, capture_output=True, cwd=ROOT, env=environment)
    ended = time.monotonic()
    if done.returncode not in (0, 1):
        raise SystemExit(f"cslint failed on {tree}:\n{done.stderr.decode(errors='replace')[-2000:]}")
    if findings:
        with open(findings, "wb") as handle:
            handle.write(done.stdout)
    with open(path) as handle:
        spans = [json.loads(line) for line in handle]
    if not keep:
        os.unlink(path)
    return launch, ended, spans


def busy_within(spans: list, start: float, end: float) -> tuple:
    """(wall, CPU) seconds of ``spans`` (one process's, not overlapping)
    inside [start, end], a span's CPU counted in proportion to its part inside."""
    wall = cpu = 0.0
    for s in spans:
        inside = min(s["end"], end) - max(s["start"], start)
        if inside > 0:
            wall += inside
            cpu += s["cpu"] * inside / max(s["end"] - s["start"], 1e-9)
    return wall, cpu


def _cell(busy: tuple) -> str:
    return f"{busy[0]:5.2f}/{busy[1]:<5.2f}"


def report(launch: float, ended: float, spans: list, show_spans: bool) -> None:
    by_who: dict = {}
    for s in spans:
        by_who.setdefault(s["who"], []).append(s)
    others = sorted(who for who in by_who if who != "run")
    own = sorted(by_who.get("run", []), key=lambda s: (s["start"], -s["end"]))
    rows = []  # (label, start, end, run CPU)
    previous = launch
    for s in own:
        if s["what"] in TOP:
            if s["start"] > previous + 0.005:
                rows.append(("(between)", previous, s["start"], None))
            rows.append((s["what"], s["start"], s["end"], s["cpu"]))
            previous = s["end"]
    if ended > previous:
        rows.append(("(after: workers closed, report, exit)", previous, ended, None))
    inner = [s for s in own if s["what"] not in TOP]
    header = f"{'phase':<46} {'from':>6} {'wall':>6} {'run CPU':>7} " + " ".join(f"{who:>11}" for who in others)
    print(f"one cold run: {ended - launch:.2f} s from launch to exit")
    print(header)

    def row(label: str, start: float, end: float, cpu) -> None:
        cells = " ".join(_cell(busy_within(by_who[who], start, end)) for who in others)
        cpu_text = f"{cpu:7.2f}" if cpu is not None else " " * 7
        print(f"{label:<46} {start - launch:6.2f} {end - start:6.2f} {cpu_text} {cells}")

    for label, start, end, cpu in rows:
        row(label, start, end, cpu)
        for what, first, last, spent, busy in _inner_rows(inner, start, end, others, by_who):
            cells = " ".join(_cell(busy[who]) for who in others)
            print(f"{'  ' + what:<46} {first - launch:6.2f} {last - first:6.2f} {spent:7.2f} {cells}")
    print(f"{'whole run':<46} {0:6.2f} {ended - launch:6.2f} {'':>7} "
          + " ".join(_cell(busy_within(by_who[who], launch, ended)) for who in others))
    print("(worker and helper columns: wall/CPU seconds each spent on its tasks within the row's"
          " interval; the rest of the row's wall it sat idle)")
    print("CPU of each process's tasks: " + ", ".join(
        f"{who} {sum(s['cpu'] for s in by_who[who]):.2f} s" for who in others))
    marks = [s for s in own if s["end"] == s["start"]]
    if marks:
        print("instants (the run's process CPU so far): " + ", ".join(
            f"{s['what']} {s['start'] - launch:.2f} ({s['cpu']:.2f})" for s in marks))
    if show_spans:
        for who in others:
            print(f"-- {who}")
            for s in sorted(by_who[who], key=lambda s: s["start"]):
                print(f"   {s['start'] - launch:7.3f} {s['end'] - s['start']:6.3f} cpu {s['cpu']:6.3f}  {s['what']}")


def _inner_rows(inner: list, start: float, end: float, others: list, by_who: dict):
    """The spans of the run's process inside [start, end], consecutive spans
    of one kind as one row (the pass asks for pending summaries as it goes,
    a round waits for its tasks many times): (what, first start, last end,
    CPU summed, {who: busy within the spans})."""
    rows: list = []  # [kind, first, last, wall, cpu, busy, count, functions]
    for s in inner:
        if not (start <= s["start"] < end and s["end"] > s["start"]):
            continue
        what = s["what"]
        kind, functions = (what.split()[0], int(what.split()[1])) if what.startswith("fill ") else (what, 0)
        busy = {who: busy_within(by_who[who], s["start"], s["end"]) for who in others}
        if rows and rows[-1][0] == kind:
            last = rows[-1]
            last[2] = s["end"]
            last[3] += s["end"] - s["start"]
            last[4] += s["cpu"]
            last[5] = {who: (last[5][who][0] + busy[who][0], last[5][who][1] + busy[who][1]) for who in others}
            last[6] += 1
            last[7] += functions
            continue
        rows.append([kind, s["start"], s["end"], s["end"] - s["start"], s["cpu"], busy, 1, functions])
    for kind, first, last, wall, spent, busy, count, functions in rows:
        if kind == "fill":
            kind = f"fills: {count} asked, {functions} summaries, {wall:.2f} s waiting"
        elif count > 1:
            kind = f"{kind} (x{count}, {wall:.2f} s)"
        yield kind, first, last, spent, busy


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tree", nargs="?")
    parser.add_argument("--jobs", type=int)
    parser.add_argument("--config")
    parser.add_argument("--spans", action="store_true", help="list every task of the workers and the helper")
    parser.add_argument("--keep", help="keep the spans in this file (JSON lines)")
    parser.add_argument("--findings", help="write the run's JSON report to this file")
    args = parser.parse_args(argv)
    tree = args.tree or pinned("vllm")
    launch, ended, spans = run(tree, args.jobs, args.config, args.keep, args.findings)
    report(launch, ended, spans, args.spans)
    return 0


if __name__ == "__main__":
    sys.exit(main())
