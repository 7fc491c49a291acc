"""Where the wall clock of one cold ``cslint check`` goes, process by process.

Runs ``cslint check --no-cache --format json TREE`` once as a fresh process
with ``CSLINT_TIMELINE`` set (:mod:`cslint.engine.timeline`), then prints,
for each phase of the run's own process (seconds from the launch), its
wall clock, the run's CPU, and how long each worker and the ordering
helper worked meanwhile; a core a worker leaves idle through a phase of the
run's process is what a cold run loses to the serial part.  Ratios of
phases within one run hold on a loaded machine; seconds do not.

    .venv/bin/python bench/timeline.py [TREE] [--jobs N] [--config FILE] [--spans] [--keep FILE]
    .venv/bin/python bench/timeline.py --load FILE      (the spans a --keep kept, reported again)

Last, the wall by how many of the run's processes work at once, and where
fewer than the machine's cores do (the run's process waiting on its
workers is not working; a worker is working only within a task): on an
idle machine, the seconds a core sits idle, phase by phase.

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


#: the spans of the run's process in which it waits for the workers (the
#: rest of its wall, from launch to exit, it works)
WAITS = ("wait for the round's last tasks",)


def working_intervals(launch: float, ended: float, spans: list) -> dict:
    """who -> the intervals in which that process works, merged and in
    order: a worker or the helper within its tasks, the run's process from
    launch to exit but for its waits on the workers (a round's last tasks,
    a request for pending summaries)."""
    by_who: dict = {}
    for s in spans:
        if s["who"] != "run" and s["end"] > s["start"]:
            by_who.setdefault(s["who"], []).append((s["start"], s["end"]))
    waits = sorted((s["start"], s["end"]) for s in spans if s["who"] == "run" and s["end"] > s["start"]
                   and (s["what"] in WAITS or s["what"].startswith("fill ")))
    own = []
    at = launch
    for start, end in _merged(waits):
        if start > at:
            own.append((at, min(start, ended)))
        at = max(at, end)
    if ended > at:
        own.append((at, ended))
    by_who["run"] = own
    return {who: _merged(intervals) for who, intervals in by_who.items()}


def _merged(intervals: list) -> list:
    out: list = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def concurrency(launch: float, ended: float, spans: list, cores: int) -> tuple:
    """(seconds of the run by how many of its processes work at once,
    {TOP phase or "(between)": seconds in it with fewer than ``cores``
    working}): the wall a core sits idle in, phase by phase."""
    working = working_intervals(launch, ended, spans)
    phases = sorted((s["start"], s["end"], s["what"]) for s in spans
                    if s["who"] == "run" and s["what"] in TOP)
    edges = sorted(t for t in {launch, ended} | {t for intervals in working.values() for interval in intervals
                                                 for t in interval} | {t for phase in phases for t in phase[:2]}
                   if launch <= t <= ended)
    by_count: dict = {}
    short: dict = {}
    cursors = {who: 0 for who in working}
    for start, end in zip(edges, edges[1:]):
        middle = (start + end) / 2
        count = 0
        for who, intervals in working.items():
            i = cursors[who]
            while i < len(intervals) and intervals[i][1] <= middle:
                i += 1
            cursors[who] = i
            count += i < len(intervals) and intervals[i][0] <= middle
        by_count[count] = by_count.get(count, 0.0) + end - start
        if count < cores:
            phase = next((what for first, last, what in phases if first <= middle < last), "(between)")
            short[phase] = short.get(phase, 0.0) + end - start
    return by_count, short


def report_concurrency(launch: float, ended: float, spans: list, cores: int) -> None:
    by_count, short = concurrency(launch, ended, spans, cores)
    print("processes working at once (the run's process but for its waits on the workers, each worker"
          " within its tasks, the helper): " + ", ".join(
              f"{count}: {seconds:.2f} s" for count, seconds in sorted(by_count.items())))
    print(f"with fewer than {cores} working (a core idle, or more): " + ", ".join(
        f"{phase} {seconds:.2f} s" for phase, seconds in sorted(short.items(), key=lambda item: -item[1])))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tree", nargs="?")
    parser.add_argument("--jobs", type=int)
    parser.add_argument("--config")
    parser.add_argument("--spans", action="store_true", help="list every task of the workers and the helper")
    parser.add_argument("--keep", help="keep the spans in this file (JSON lines)")
    parser.add_argument("--findings", help="write the run's JSON report to this file")
    parser.add_argument("--cores", type=int, default=len(os.sched_getaffinity(0)),
                        help="cores of the machine, for the idle-core summary (default: this process's)")
    parser.add_argument("--load", help="report the spans kept in this file instead of running (with --keep's format;"
                        " launch and exit taken as the first span's start and the exit mark)")
    args = parser.parse_args(argv)
    if args.load:
        with open(args.load) as handle:
            spans = [json.loads(line) for line in handle]
        launch = min(s["start"] for s in spans)
        ended = max(s["end"] for s in spans)
    else:
        tree = args.tree or pinned("vllm")
        launch, ended, spans = run(tree, args.jobs, args.config, args.keep, args.findings)
    report(launch, ended, spans, args.spans)
    report_concurrency(launch, ended, spans, args.cores)
    return 0


if __name__ == "__main__":
    sys.exit(main())
