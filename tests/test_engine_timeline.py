"""The opt-in timeline of a run (cslint/engine/timeline.py, CSLINT_TIMELINE)
and bench/timeline.py, which reads it: every process of a run writes what
it timed, and nothing is timed or written unless asked."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
from contextlib import redirect_stdout

from bench_scripts import load_bench

from cslint.engine import timeline
from cslint.engine.workers import PARALLEL_THRESHOLD

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAUNCH = "import sys; sys.path[0] = sys.argv.pop(1); from cslint.cli import console_main; console_main()"

MODULE = textwrap.dedent("""
    import torch.distributed as dist


    def helper_{index}(x):
        return x + 1


    def step_{index}(t):
        if helper_{index}(dist.get_rank()) == 0:
            return
        dist.all_reduce(t)
""")


def _timed_run(tmp_path, environment: dict) -> subprocess.CompletedProcess:
    tree = tmp_path / "tree"
    tree.mkdir()
    for index in range(PARALLEL_THRESHOLD + 2):
        (tree / f"m{index}.py").write_text(MODULE.format(index=index))
    return subprocess.run([sys.executable, "-c", LAUNCH, REPO_ROOT, "check", "--no-cache", "--jobs", "2",
                           "--format", "json", str(tree)], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, **environment), cwd=str(tmp_path))


def test_each_process_of_a_run_writes_its_spans(tmp_path):
    path = tmp_path / "timeline.jsonl"
    done = _timed_run(tmp_path, {"CSLINT_TIMELINE": str(path)})
    assert done.returncode == 1, done.stderr  # findings
    assert len(json.loads(done.stdout)["findings"]) == PARALLEL_THRESHOLD + 2
    spans = [json.loads(line) for line in path.read_text().splitlines()]
    by_who: dict = {}
    for span in spans:
        assert span["start"] <= span["end"] and span["cpu"] >= 0
        by_who.setdefault(span["who"], []).append(span)
    assert {"run", "worker-0", "worker-1", "helper"} <= set(by_who)
    own = {span["what"] for span in by_who["run"]}
    assert {"discovery", "gather", "round 1", "whole-tree pass", "Program built", "demand", "fixpoint",
            "hazards", "exit"} <= own
    exited = next(span["end"] for span in by_who["run"] if span["what"] == "exit")
    extracted = [span for who in ("worker-0", "worker-1") for span in by_who[who]
                 if span["what"].startswith("batch ")]
    assert sum(int(span["what"].split()[1]) for span in extracted) >= PARALLEL_THRESHOLD + 2
    assert all(span["end"] <= exited for span in extracted)
    assert {span["what"] for span in by_who["helper"]} >= {"readers"}

    # bench/timeline.py's table, from the same spans
    bench = load_bench("timeline")
    launch = min(span["start"] for span in spans)
    printed = io.StringIO()
    with redirect_stdout(printed):
        bench.report(launch, exited, spans, False)
    rows = printed.getvalue().splitlines()
    assert any(row.startswith("gather ") for row in rows)
    assert any(row.startswith("whole-tree pass ") for row in rows)
    assert "worker-0" in rows[1] and "helper" in rows[1]


def test_without_the_variable_nothing_is_timed_or_written(tmp_path, monkeypatch):
    done = _timed_run(tmp_path, {})
    assert done.returncode == 1, done.stderr
    assert sorted(os.listdir(tmp_path)) == ["tree"]
    monkeypatch.setattr(timeline, "PATH", None)
    # one shared object whose ``with`` does nothing
    assert timeline.span("gather") is timeline.span("fixpoint")
    timeline.mark("exit")
    timeline.write()
    assert not timeline._spans


def test_the_wall_by_how_many_processes_work_at_once():
    # the run's process waits for a round's last tasks and for one fill; a
    # worker works only within its tasks, the helper within its own
    def span(who, what, start, end):
        return {"who": who, "pid": 1, "what": what, "start": start, "end": end, "cpu": 0.0}

    spans = [span("run", "gather", 0, 10), span("run", "wait for the round's last tasks", 5, 10),
             span("run", "whole-tree pass", 10, 14), span("run", "fill 3", 12, 13),
             span("worker-0", "batch 8", 1, 9), span("worker-0", "fill 3", 12, 13),
             span("worker-1", "batch 8", 2, 10), span("helper", "readers", 11, 12)]
    bench = load_bench("timeline")
    assert bench.working_intervals(0, 15, spans)["run"] == [(0, 5), (10, 12), (13, 15)]
    by_count, short = bench.concurrency(0, 15, spans, 2)
    assert by_count == {1: 6, 2: 6, 3: 3}
    # fewer than two at work: the first second of the gather and its last,
    # the pass but while the helper or the fill works, and the exit after it
    assert short == {"gather": 2, "whole-tree pass": 3, "(between)": 1}
