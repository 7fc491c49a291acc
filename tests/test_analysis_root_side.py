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
from tests.test_analysis_root_announced import _ANNOUNCED, _ROOT_ONLY, _SERVER, _lines


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


def _server(tmp_path, made_where: str, replaced: tuple = ("", "")) -> list:
    source = _SERVER.replace("MADE_WHERE", made_where).replace("WORK_HEADER", _ANNOUNCED).replace(*replaced)
    return _findings(tmp_path, source)


def test_a_queue_made_where_the_rank_id_is_the_group_s_stays_paired(tmp_path):
    assert _server(tmp_path, _ROOT_ONLY) == []


def test_a_queue_made_on_local_rank_0_stays(tmp_path):
    # one rank per node has local rank 0: several ranks of the group run the loop
    made = "if self.local_rank != 0:\n                return"
    lines = _server(tmp_path, made, ("self.inbox = inbox", "self.inbox = inbox\n            self.local_rank = inbox.local_rank"))
    assert lines == [56, 59, 60, 61, 63]


def test_a_queue_made_where_a_local_name_of_a_node_position_is_0_stays(tmp_path):
    made = "local_rank = self.inbox.local_rank\n            if local_rank != 0:\n                return"
    assert _server(tmp_path, made) == [56, 59, 60, 61, 63]


def test_a_queue_made_where_a_rank_worked_on_is_0_stays(tmp_path):
    # rank // 2 is 0 on two ranks
    lines = _server(tmp_path, _ROOT_ONLY, ("self.rank = rank", "self.rank = rank // 2"))
    assert lines == [55, 58, 59, 60, 62]


def test_a_method_of_the_same_name_in_another_class_stays(tmp_path):
    # Replica runs its loop of the same name on every rank, handed to a thread:
    # the server's field marks the server's own method alone
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    server = _SERVER.replace("MADE_WHERE", _ROOT_ONLY).replace("WORK_HEADER", _ANNOUNCED)
    (package / "server.py").write_text(textwrap.dedent(server))
    replica = _SERVER.replace("MADE_WHERE", "pass").replace("WORK_HEADER", _ANNOUNCED).replace(
        "class Server:", "class Replica:").replace("self._root_loop()", "threading.Thread(target=self._root_loop).start()")
    (package / "replica.py").write_text(textwrap.dedent(replica))
    findings = check_paths([str(package)], cache=False, jobs=1, report="per-site").findings
    assert sorted((f.path.rpartition("/")[2], f.line) for f in findings) == [
        ("replica.py", 54), ("replica.py", 57), ("replica.py", 58), ("replica.py", 59), ("replica.py", 61)]
