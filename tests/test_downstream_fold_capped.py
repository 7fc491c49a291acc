"""A hazard is folded under another as read only downstream when every flow
that makes its condition differ passes a field set where the ranks part.
Each value keeps a few explanations only (divergence.MAX_SOURCES), so the
list the fold reads may lack a flow of the condition's own; a list that the
cap may have cut proves nothing about every flow (issue 14)."""

from __future__ import annotations

from cslint.api import check_paths

POLLS = ("a", "b", "c", "d")

HEADER = """\
import os

import torch.distributed as dist


class Worker:
    def __init__(self):
        self.stopping = False
"""

POLL = """
    def poll_{name}(self):
        if os.path.exists("/tmp/stop_{name}"):
            self.stopping = True
            dist.barrier()
"""

FOOTER = """
    def reload(self):
        self.stopping = os.path.isfile("/tmp/stopped")

    def sync(self, t):
        if not self.stopping:
            dist.all_reduce(t)
"""


def _report(tmp_path, polls) -> tuple:
    """The line of ``sync``'s collective and the lines the root-cause report flags."""
    text = HEADER + "".join(POLL.format(name=name) for name in polls) + FOOTER
    (tmp_path / "worker.py").write_text(text)
    sync_line = text.splitlines().index("        if not self.stopping:") + 2
    lines = [f.line for f in check_paths([str(tmp_path)], report="root-cause").findings]
    return sync_line, lines


def test_a_flow_of_its_own_keeps_the_reader_reported_below_the_cap(tmp_path):
    # three parted writes and reload's rank-local value: every flow is listed, one passes no parted field
    sync_line, lines = _report(tmp_path, POLLS[:3])
    assert sync_line in lines


def test_a_flow_of_its_own_the_cap_may_have_dropped_keeps_the_reader_reported(tmp_path):
    # four parted writes fill the list of explanations; reload's flow of its own (which no poll's barrier
    # parts) may be the one left out, so the reader is not concluded to read those barriers only
    sync_line, lines = _report(tmp_path, POLLS)
    assert sync_line in lines
