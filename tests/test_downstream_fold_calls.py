"""A field a call sets, where the call runs only on the ranks one side of
another hazard's condition, is set where the ranks already part, as if that
side set it itself: what reads it downstream is that hazard's consequence,
reported once at the root (issue 14).  The side of an ``and`` operand is the
body of the ``if`` whose whole test it is; a hazard that carries the root
cause of a site its calling contexts settle is such a root too."""

from __future__ import annotations

import textwrap

from cslint.api import check_paths

DRAIN = """
    import torch.distributed as dist


    class Worker:
        def __init__(self):
            self.enabled = True
            self.draining = None

        def _agreed(self, t):
            dist.all_reduce(t)
            return bool(t.item())

        def _start_drain(self):
            self.draining = 4

        def poll(self, t):
            odd = dist.get_rank() % 2 == 1
            if self.enabled and odd and self._agreed(t):  # root: the odd ranks alone agree
                self._start_drain()

        def sync(self, t):
            ready = t.numel() > 0
            if self.draining is not None:
                ready = False
            if ready:
                dist.all_reduce(t)  # downstream: only the odd ranks started a drain
"""

PLAIN = """
    import time

    import torch.distributed as dist


    class Worker:
        def __init__(self):
            self.draining = None

        def _start_drain(self):
            self.draining = 4

        def poll(self, t):
            if dist.get_rank() % 2 == 1:
                dist.barrier()  # root
                self._start_drain()

        def poll_quietly(self, t):
            dist.barrier()
            if time.monotonic() > 5.0:
                self._start_drain()

        def sync(self, t):
            if self.draining is None:
                dist.all_reduce(t)  # own: poll_quietly's ranks part with no collective there
"""

SETTLED = """\
import torch
import torch.distributed as dist


class Engine:
    def __init__(self):
        self.failed = None
        self.stopping = False
        self.replies = []
        self.draining = None

    def handle(self, msg, *, aligned=False):
        is_fatal = self.failed is not None or msg.startswith("fatal")
        if is_fatal:
            if self.failed is None:
                self.failed = RuntimeError(msg)
            self.stopping = True
            if aligned:
                dist.all_gather_object([None] * dist.get_world_size(), self.replies)
        self.replies.clear()

    def load(self, path):
        try:
            with open(path) as f:
                return f.read()
        except OSError as e:
            self.handle(f"fatal: {e}")
        return None

    def check_poisoned(self, local_bad):
        flag = torch.tensor([int(local_bad)])
        dist.all_reduce(flag)
        if flag.item():
            self.failed = RuntimeError("poisoned")
            self.stopping = True
            self.handle("poisoned", aligned=True)

    def poll(self, t, odd):
        if not self.stopping and self._agreed(t) and odd:  # root: the stopping ranks skip the agreement
            self._start_drain()

    def step(self, t):
        if not self.stopping:
            dist.all_reduce(t)  # downstream of the same fault

    def _agreed(self, t):
        dist.all_reduce(t)
        return bool(t.item())

    def _start_drain(self):
        self.draining = 4

    def serve(self, t):
        self.poll(t, dist.get_rank() % 2 == 1)
        ready = t.numel() > 0
        if self.draining is not None:
            ready = False
        if ready:
            dist.all_reduce(t)  # downstream: the drain starts in poll's arm
"""


def _marked(text: str, mark: str) -> list:
    return [n for n, line in enumerate(textwrap.dedent(text).splitlines(), 1) if f"# {mark}" in line]


def _lines(tmp_path, text: str, report: str = "root-cause", name: str = "worker.py") -> list:
    (tmp_path / name).write_text(textwrap.dedent(text))
    return sorted(f.line for f in check_paths([str(tmp_path)], report=report).findings)


def test_a_field_a_call_sets_in_the_arm_of_a_reported_operand_is_read_downstream(tmp_path):
    assert _lines(tmp_path, DRAIN) == _marked(DRAIN, "root")
    assert _lines(tmp_path, DRAIN, "per-site") == sorted(_marked(DRAIN, "root") + _marked(DRAIN, "downstream"))


def test_a_field_a_call_sets_inside_a_reported_branch_is_read_downstream_unless_set_elsewhere(tmp_path):
    # the reader's flow also passes poll_quietly's call, where no hazard parts the ranks: it stays
    assert _lines(tmp_path, PLAIN) == sorted(_marked(PLAIN, "root") + _marked(PLAIN, "own"))
    quiet = PLAIN.replace("            if time.monotonic() > 5.0:\n                self._start_drain()\n",
                          "            pass\n")
    assert _lines(tmp_path, quiet) == _marked(quiet, "root")


def test_the_hazard_carrying_a_settled_sites_root_folds_what_reads_downstream_of_it(tmp_path):
    # the gather in `handle` runs only in the agreed calling context (no hazard); `poll`, first of
    # the hazards reading the fault it parts the ranks on, carries that root cause, and the drain
    # started in its arm is read downstream of it (whichever flow of the drain's explanation is kept:
    # in a module of this name, the one through the call in poll's arm)
    assert _lines(tmp_path, SETTLED, name="engine.py") == _marked(SETTLED, "root")
    assert _lines(tmp_path, SETTLED, "per-site", name="engine.py") == sorted(
        _marked(SETTLED, "root") + _marked(SETTLED, "downstream"))
