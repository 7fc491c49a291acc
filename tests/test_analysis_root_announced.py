"""A loop one rank of the group runs alone, whose every arm opens by
announcing itself to the others (issue 14, complementary-role-arms).

Rank 0 alone makes the queue its thread fills (``if self.rank != 0: return``
before it), and the serving loop is entered only where that queue is there:
no other rank runs it (``rootside.py``, ``processes.runs_only_on_root``).
Which arm it takes depends on what rank 0 alone received, but each arm opens
with the same broadcast of a payload the code fixes, which the others' loop
takes, whatever it is, before anything else: their loop follows the root's
choice (``announced.py``).  An arm that skips its announcement, one that
announces a payload read from the message, a rank-local test around the
announcement, and the same loop run on every rank stay reported."""

import textwrap
from typing import Optional

from cslint.api import check_paths

_SERVER = """
    import queue
    import threading

    import torch.distributed as dist


    class Server:
        def __init__(self, rank, group, inbox):
            self.rank = rank
            self.group = group
            self.inbox = inbox
            self.size = dist.get_world_size(group)
            self._ready = None
            self._running = True

        def start(self):
            MADE_WHERE
            self._ready = queue.Queue(maxsize=4)
            threading.Thread(target=self._fill, daemon=True).start()

        def _fill(self):
            while True:
                self._ready.put(self.inbox.recv())

        def _announce(self, header):
            box = [header]
            dist.broadcast_object_list(box, src=0, group=self.group)
            return box[0]

        def _share(self, job):
            box = [job]
            dist.broadcast_object_list(box, src=0, group=self.group)
            return box[0]

        def _compute(self, job):
            out = job.run()
            dist.all_reduce(out, group=self.group)
            return out

        def serve(self):
            serving = self._ready is not None
            if serving:
                self._root_loop()
                return
            self._receiver_loop()

        def _root_loop(self):
            while self._running:
                try:
                    try:
                        kind, job = self._ready.get(timeout=1.0)
                    except queue.Empty:
                        self._announce(("idle",))
                        continue
                    if kind == "work":
                        WORK_HEADER
                        job = self._share(job)
                        self._compute(job)
                    elif kind == "note":
                        self._announce(("idle",))
                        self.inbox.ack(job)
                except Exception:
                    self.inbox.report()
            self._announce(None)

        def _receiver_loop(self):
            while True:
                header = self._announce(None)
                if header is None:
                    break
                if header[0] == "work":
                    job = self._share(None)
                    self._compute(job)
"""

_ROOT_ONLY = "if self.rank != 0:\n                return"
_ANNOUNCED = 'self._announce(("work",))'


def _lines(tmp_path, made_where: str = _ROOT_ONLY, work_header: str = _ANNOUNCED, extra: str = "",
           others: Optional[dict] = None) -> list:
    package = tmp_path / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    source = _SERVER.replace("MADE_WHERE", made_where).replace("WORK_HEADER", work_header) + extra
    (package / "server.py").write_text(textwrap.dedent(source))
    for name, text in (others or {}).items():
        (package / name).write_text(textwrap.dedent(text))
    return sorted(f.line for f in check_paths([str(package)], cache=False, jobs=1, report="per-site").findings
                  if f.path.endswith("server.py"))


def test_a_root_loop_announcing_every_arm_pairs_with_the_receivers(tmp_path):
    assert _lines(tmp_path) == []


def test_the_announcement_may_sit_under_a_test_every_rank_agrees_on(tmp_path):
    header = 'if self.size > 1:\n                            self._announce(("work",))'
    assert _lines(tmp_path, work_header=header) == []


def test_an_arm_that_skips_its_announcement_stays(tmp_path):
    assert _lines(tmp_path, work_header="pass") == [59, 60, 62]


def test_an_announcement_read_from_the_message_stays(tmp_path):
    assert _lines(tmp_path, work_header="self._announce(kind)") == [58, 59, 60, 62]


def test_a_rank_local_test_around_the_announcement_stays(tmp_path):
    header = 'if job.urgent:\n                            self._announce(("work",))'
    assert _lines(tmp_path, work_header=header) == [59, 60, 61, 63]


def test_the_same_loop_run_on_every_rank_stays(tmp_path):
    assert _lines(tmp_path, made_where="pass") == [54, 57, 58, 59, 61]


_RUNNER = """
    import torch.distributed as dist

    from .server import Server


    def run_on_every_rank(server: Server):
        step = server.LOOP
        dist.barrier()
        step()
"""


def test_the_loop_read_as_a_value_runs_wherever_that_value_is_called(tmp_path):
    # a method read as a value (getattr, a callback handed on from another file) runs wherever the value is
    # called, on every rank here: the field test naming it in ``serve`` does not make it the root's alone
    # (processes.runs_only_on_root, as processes.called_methods)
    by_getattr = """
        def run_steps(self):
            getattr(self, "_root_loop")()
"""
    assert _lines(tmp_path / "a", extra=by_getattr) == [55, 58, 59, 60, 62]
    assert _lines(tmp_path / "b", others={"runner.py": _RUNNER.replace("LOOP", "_root_loop")}) \
        == [55, 58, 59, 60, 62]


_MIXIN = """
    import torch.distributed as dist


    class Stepping:
        def run_steps(self):
            step = self.LOOP
            dist.barrier()
            step()
"""

_JOINED = """
    from .server import Server
    from .stepping import Stepping


    class SteppingServer(Server, Stepping):
        pass
"""


def test_the_loop_a_mixin_reads_on_its_own_receiver_runs_wherever_that_value_is_called(tmp_path):
    # ``self._root_loop`` read by a mixin another class joins to the server is the server's loop
    others = {"stepping.py": _MIXIN.replace("LOOP", "_root_loop"), "joined.py": _JOINED}
    assert _lines(tmp_path, others=others) == [55, 58, 59, 60, 62]


def test_another_method_read_as_a_value_leaves_the_root_loop_alone(tmp_path):
    assert _lines(tmp_path, others={"runner.py": _RUNNER.replace("LOOP", "_receiver_loop")}) == []


def test_a_class_joined_to_the_server_before_the_reader_hands_the_server_s_loop(tmp_path):
    # the reader's own ``_root_loop`` comes after the server's along the joined class's MRO
    own = _MIXIN.replace("LOOP", "_root_loop") + """
        def _root_loop(self):
            pass
"""
    joined = _JOINED + """
        def sync(self):
            dist.barrier()
"""
    others = {"stepping.py": own, "joined.py": "import torch.distributed as dist\n" + textwrap.dedent(joined)}
    assert _lines(tmp_path, others=others) == [55, 58, 59, 60, 62]


def test_a_class_reading_its_own_method_of_that_name_leaves_the_root_loop_alone(tmp_path):
    # (no class of the tree joins it to the server: its ``self._root_loop`` is its own)
    own = _MIXIN.replace("LOOP", "_root_loop") + """
        def _root_loop(self):
            pass
"""
    assert _lines(tmp_path, others={"stepping.py": own}) == []
