"""bench/call_count.py counts the calls of one whole `cslint check` per code object:
the count is the same on every run, and labels several code objects share add up."""

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


def test_the_count_is_deterministic_and_sums_every_code_object(tmp_path):
    (tmp_path / "step.py").write_text(HAZARD)
    bench = load_bench("call_count")
    first = bench.count_calls(REPO_ROOT, str(tmp_path), sys.executable)
    second = bench.count_calls(REPO_ROOT, str(tmp_path), sys.executable)
    assert first["total"] == second["total"] > 1000
    assert first["total"] == sum(first["functions"].values())
    # every NamedTuple's generated __new__ carries one label; pstats would keep one class's count of them
    shared = [label for label in first["functions"] if label.startswith("<string>:1 ")]
    assert shared, sorted(first["functions"])[:20]
