"""bench/sample_cpu.py samples one whole `cslint check --jobs 1` by stack: every
sample falls in one phase, the phases add up to the whole, and a function's
label matches a phase whatever line it starts on (and for the frozen import
machinery, whose file name holds a space)."""

from __future__ import annotations

import sys

from bench_scripts import REPO_ROOT, load_bench

HAZARD = """\
import torch.distributed as dist

def step(t):
    if dist.get_rank() == 0:
        return
    dist.all_reduce(t)
"""


def test_labels_match_by_file_and_name_not_line():
    bench = load_bench("sample_cpu")
    assert bench._matches("analysis/records.py:464 fill_pending", "analysis/records.py fill_pending")
    assert bench._matches("<frozen importlib._bootstrap>:1165 _find_and_load", "importlib._bootstrap> _find_and_load")
    assert bench._matches("python3.11/ast.py:33 parse", "/ast.py parse")
    assert not bench._matches("analysis/astwalk.py:33 parse", "/ast.py parse")
    assert not bench._matches("analysis/records.py:464 fill_pending_more", "analysis/records.py fill_pending")


def test_every_sample_lands_in_one_phase():
    bench = load_bench("sample_cpu")
    sample = {"cpu": 1.0, "stacks": {
        "cli.py:1 main;engine/workers.py:128 _extract;python3.11/ast.py:33 parse": 3,
        "cli.py:1 main;engine/run.py:171 _analysis_findings;analysis/records.py:464 fill_pending": 2,
        "cli.py:1 main;engine/run.py:171 _analysis_findings;analysis/program.py:136 solve": 4,
        "cli.py:1 main": 1,
    }}
    table = bench.tables(sample, top=5)
    assert "10 samples" in table
    phases = table.split("\n\n")[1].splitlines()[1:]
    assert sum(float(row.split("%")[0]) for row in phases) == 100.0
    assert "  30.0 %  ast.parse" in phases
    assert "  20.0 %  whole-tree pass: pending summaries filled" in phases
    assert "  40.0 %  whole-tree pass" in phases
    assert "  10.0 %  other" in phases


def test_a_run_is_sampled(tmp_path):
    (tmp_path / "step.py").write_text(HAZARD)
    bench = load_bench("sample_cpu")
    sample = bench.sample_run(REPO_ROOT, str(tmp_path), sys.executable, interval_ms=0.5)
    assert sample["cpu"] > 0
    assert sum(sample["stacks"].values()) >= 1


def test_every_named_function_exists_in_the_checkout():
    # a part named after a function that moved reads 0 % (scan_calls did, once it left function.py)
    import os
    import re

    bench = load_bench("sample_cpu")
    for _name, suffix in bench.PARTS + bench.PHASES:
        where, _, function = suffix.rpartition(" ")
        if not where.startswith(("analysis/", "engine/")):
            continue
        with open(os.path.join(REPO_ROOT, "cslint", where)) as handle:
            assert re.search(rf"^\s*def {function}\(", handle.read(), re.M), suffix


def test_a_part_no_sample_is_under_is_marked():
    bench = load_bench("sample_cpu")
    table = bench.tables({"cpu": 1.0, "stacks": {"cli.py:1 main;engine/workers.py:128 _extract": 1}}, top=3)
    assert "   0.0 %    scan_calls  (no frame is 'analysis/functionscan.py scan_calls': moved or renamed?)" in table
    assert " 100.0 %  extraction\n" in table
