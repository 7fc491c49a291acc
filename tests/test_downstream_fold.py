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


def test_the_root_cause_lists_the_findings_it_folds(tmp_path):
    # the per-site reader names its upstream finding by a typed reference (not the doubt's text) ...
    (tmp_path / "worker.py").write_text(textwrap.dedent(WORKER))
    per_site = check_paths([str(tmp_path)], report="per-site").findings
    (reader,) = [f for f in per_site if f.line == 18]
    assert reader.upstream is not None
    assert (reader.upstream.guard_line, reader.upstream.line, reader.upstream.through) == (12, 14, "self.stopping")
    assert reader.upstream.path == reader.path
    assert all(f.upstream is None for f in per_site if f.line != 18)
    # ... through which the root-cause report lists it on that finding, in its message and its JSON
    findings = {f.line: f for f in check_paths([str(tmp_path)], report="root-cause").findings}
    root, own = findings[14], findings[22]
    assert [(ref.line, ref.code, ref.function) for ref in root.downstream] == [(18, "CSL101", "Worker.sync")]
    assert "1 more finding reads this divergence only downstream (18)" in root.message
    assert own.downstream == []
    data = root.to_json()
    assert data["downstream"][0]["line"] == 18 and "downstream" not in own.to_json()
    assert type(root).from_json(data).downstream == root.downstream
    assert type(reader).from_json(reader.to_json()).upstream == reader.upstream

COMM = """
    import os

    import torch.distributed as dist


    class Comm:
        def __init__(self, group):
            self.group = group
            self.disabled = True
            if not os.path.exists("/dev/shm/peer"):
                return
            if group is not None: dist.barrier(group=group)
            self.disabled = False

        def all_reduce(self, t):
            if self.disabled:
                return t
            dist.all_reduce(t, group=self.group)
            return t

        def all_reduce_local(self, t):
            if self.disabled or os.path.exists("/tmp/skip"):
                return t
            dist.all_reduce(t, group=self.group)
            return t
"""


def test_a_field_set_past_a_reported_early_exit_is_not_reported_again_downstream(tmp_path):
    # line 13: the barrier the ranks that leave at line 11 skip (the root cause); `self.disabled = False`
    # runs on the ranks that stayed only, so line 19 reads that divergence downstream; line 25 has a test
    # of its own and stays.  (The barrier is conditional: one every rank that stays enters would settle
    # the exit for what follows, test_analysis_settled_exits.)
    assert _lines(tmp_path, COMM) == [("CSL102", 13), ("CSL102", 25)]
    (tmp_path / "worker.py").write_text(textwrap.dedent(COMM))
    findings = check_paths([str(tmp_path)], report="per-site").findings
    assert sorted((f.code, f.line) for f in findings) == [("CSL102", 13), ("CSL102", 19), ("CSL102", 25)]
    (reader,) = [f for f in findings if f.line == 19]
    (upstream,) = [d for d in reader.confidence.doubts if d.kind == "reported-upstream"]
    assert "past the early exit at line 12" in upstream.note


def test_a_field_set_before_the_early_exit_is_still_reported(tmp_path):
    # the field is written before the exit, on every rank: nothing parts the ranks there
    text = COMM.replace("        self.disabled = True\n", "        self.disabled = os.path.exists('/tmp/off')\n") \
        .replace("        self.disabled = False\n", "")
    assert _lines(tmp_path, text) == [("CSL102", 13), ("CSL102", 18), ("CSL102", 24)]


def test_a_field_set_past_an_exit_inside_a_loop_is_still_reported(tmp_path):
    # a rank leaving one iteration meets the others again at the next one: the exit parts nothing for
    # good, so what a later statement of the loop sets is no consequence of it alone
    text = COMM.replace(
        """            if not os.path.exists("/dev/shm/peer"):
                return
            if group is not None: dist.barrier(group=group)
            self.disabled = False
""", """            for _ in range(3):
                if not os.path.exists("/dev/shm/peer"):
                    continue
                dist.barrier(group=group)
                self.disabled = False
""")
    assert _lines(tmp_path, text) == [("CSL102", 14), ("CSL102", 20), ("CSL102", 26)]


HOPS = """
    import os

    import torch.distributed as dist


    def stop_requested():
        return os.path.exists("/tmp/stop")


    def first_hop():
        return stop_requested()


    def second_hop():
        return first_hop()


    def third_hop():
        return second_hop()


    def fourth_hop():
        return third_hop()


    class Worker:
        def __init__(self):
            self.stopping = False

        def poll(self):
            if fourth_hop():
                self.stopping = True
                dist.barrier()

        def sync(self, t):
            if not self.stopping:
                dist.all_reduce(t)
"""


def test_a_field_set_where_the_ranks_part_past_the_links_an_explanation_shows_still_folds(tmp_path):
    # the barrier's test reads the filesystem through four returns, as many links as an explanation
    # shows; the reader's flow is those four and the field set under that test: a fifth link, which
    # its explanation leaves out but the pass keeps, so the reader still folds under the barrier
    assert _lines(tmp_path, HOPS) == [("CSL101", 34)]
    (tmp_path / "worker.py").write_text(textwrap.dedent(HOPS))
    findings = check_paths([str(tmp_path)], report="per-site").findings
    (reader,) = [f for f in findings if f.line == 38]
    assert {d.kind for d in reader.confidence.doubts} >= {"flow-cut", "reported-upstream", "read-downstream"}
    assert len([link for link in reader.chain if "returned by" in link.note]) == 4  # the links shown



def test_of_two_flows_longer_than_an_explanation_the_shorter_explains_the_finding(tmp_path):
    # seven links from the filesystem test, six from the rank: both are shown cut, and the one with
    # fewer links is cited (the pass keeps their lengths), not the one whose source sorts first
    hops = "".join(f"""

    def hop_{n}():
        return {f"hop_{n - 1}" if n > 1 else "stop_requested"}()
""" for n in range(1, 7))
    ranks = "".join(f"""

    def rank_{n}():
        return {f"rank_{n - 1}" if n > 1 else "own_rank"}()
""" for n in range(1, 6))
    text = """
    import os

    import torch.distributed as dist


    def stop_requested():
        return os.path.exists("/tmp/stop")


    def own_rank():
        return dist.get_rank()
""" + hops + ranks + """

    def step(t):
        if hop_6() or rank_5() > 3:
            dist.all_reduce(t)
"""
    (tmp_path / "worker.py").write_text(textwrap.dedent(text))
    (finding,) = check_paths([str(tmp_path)]).findings
    assert finding.source == "dist.get_rank()"
