"""A condition that reads a divergence only through a field set inside
another hazard's condition is that hazard's consequence: the root cause is
reported once, where the ranks part (issue 14)."""

from __future__ import annotations

import textwrap

from cslint.api import check_paths

WORKER = """
    import os

    import torch.distributed as dist


    class Worker:
        def __init__(self):
            self.stopping = False

        def poll(self):
            if os.path.exists("/tmp/stop"):
                self.stopping = True
                dist.barrier()

        def sync(self, t):
            if not self.stopping:
                dist.all_reduce(t)

        def sync_local(self, t):
            if not self.stopping or os.path.exists("/tmp/skip"):
                dist.all_reduce(t)
"""


def _lines(tmp_path, text: str, report: str = "root-cause") -> list:
    (tmp_path / "worker.py").write_text(textwrap.dedent(text))
    return sorted((f.code, f.line) for f in check_paths([str(tmp_path)], report=report).findings)


def test_a_field_set_inside_a_reported_condition_is_not_reported_again_downstream(tmp_path):
    # line 14: the barrier under the filesystem test (the root cause, whose body sets the field);
    # line 18 reads only that field and is left out; line 22 also reads a test of its own and stays
    assert _lines(tmp_path, WORKER) == [("CSL101", 14), ("CSL101", 22)]


def test_the_per_site_report_still_shows_the_downstream_read(tmp_path):
    (tmp_path / "worker.py").write_text(textwrap.dedent(WORKER))
    findings = check_paths([str(tmp_path)], report="per-site").findings
    assert sorted((f.code, f.line) for f in findings) == [("CSL101", 14), ("CSL101", 18), ("CSL101", 22)]
    (reader,) = [f for f in findings if f.line == 18]
    assert {d.kind for d in reader.confidence.doubts} >= {"reported-upstream", "read-downstream"}


def test_a_field_set_outside_any_reported_condition_is_still_reported(tmp_path):
    # the field is set under the test, but no collective there: nothing upstream reports it
    text = WORKER.replace("                dist.barrier()\n", "")
    assert _lines(tmp_path, text) == [("CSL101", 17), ("CSL101", 21)]
