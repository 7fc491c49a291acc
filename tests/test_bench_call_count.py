"""bench/call_count.py counts the calls of one whole `cslint check` per code object:
the count is the same on every run, and labels several code objects share add up."""

from __future__ import annotations

import importlib.util
import os
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HAZARD = """\
import torch.distributed as dist

def step(t):
    if dist.get_rank() == 0:
        return
    dist.all_reduce(t)
"""


def _bench():
    bench_dir = os.path.join(REPO_ROOT, "bench")
    if bench_dir not in sys.path:
        sys.path.insert(0, bench_dir)  # its siblings (commit_speed, realtree), as when run as a script
    spec = importlib.util.spec_from_file_location("bench_call_count", os.path.join(bench_dir, "call_count.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_count_is_deterministic_and_sums_every_code_object(tmp_path):
    (tmp_path / "step.py").write_text(HAZARD)
    bench = _bench()
    first = bench.count_calls(REPO_ROOT, str(tmp_path), sys.executable)
    second = bench.count_calls(REPO_ROOT, str(tmp_path), sys.executable)
    assert first["total"] == second["total"] > 1000
    assert first["total"] == sum(first["functions"].values())
    # every NamedTuple's generated __new__ carries one label; pstats would keep one class's count of them
    shared = [label for label in first["functions"] if label.startswith("<string>:1 ")]
    assert shared, sorted(first["functions"])[:20]
