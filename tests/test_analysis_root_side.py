"""What one rank of the group runs alone, and the announcements of its
decisions (issue 14, complementary-role-arms): the shapes that must stay
reported beside tests/test_analysis_root_announced.py.  A decision is
announced only where every announcement an arm makes is skipped only under
tests every rank agrees on, and a way issuing nothing passes only where a
loop around the whole decision takes the root on to its next announcement.
A queue is made on one rank of the group alone only where the id tested is
the group's rank as it is read (not a node's local rank, not a rank worked
on), and the field marks the methods of its own class's family alone."""

import textwrap

from cslint.api import check_paths
from tests.test_analysis_root_announced import _lines


def _findings(tmp_path, source: str) -> list:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "server.py").write_text(textwrap.dedent(source))
    return sorted(f.line for f in check_paths([str(package)], cache=False, jobs=1, report="per-site").findings
                  if f.path.endswith("server.py"))


def test_an_arm_announcing_on_one_way_under_a_rank_local_test_stays(tmp_path):
    # one way announces under a test every rank agrees on, another under the
    # message's own flag, a third not at all: the others wait in the
    # announcement while the root shares the job
    header = ('if self.size > 1:\n                            self._announce(("work",))\n'
              '                        elif job.urgent:\n                            self._announce(("work",))')
    assert _lines(tmp_path, work_header=header) == [59, 61, 62, 63, 65]


_ONE_MESSAGE = """
import queue

import torch.distributed as dist


class Server:
    def __init__(self, rank, group, inbox):
        self.rank = rank
        self.group = group
        self.inbox = inbox
        self._ready = None

    def start(self):
        if self.rank != 0:
            return
        self._ready = queue.Queue()

    def _announce(self, header):
        box = [header]
        dist.broadcast_object_list(box, src=0, group=self.group)
        return box[0]

    def _compute(self, part):
        out = dist.get_rank() * part
        dist.all_reduce(out, group=self.group)

    def serve(self):
        if self._ready is not None:
            self._root_step()
            return
        header = self._announce(None)
        for part in header[1]:
            self._compute(part)

    def _root_step(self):
        kind, job = self._ready.get()
        if kind == "work":
            self._announce(("work",))
            for part in range(2):
                self._compute(part)
        elif kind == "note":
            self.inbox.ack(job)
"""


def test_an_idle_arm_with_no_loop_around_the_decision_stays(tmp_path):
    # the root takes one message per call: the loop inside the work arm does
    # not take it on to a next announcement where the note arm issues nothing
    assert _findings(tmp_path, _ONE_MESSAGE) == [39, 41]
