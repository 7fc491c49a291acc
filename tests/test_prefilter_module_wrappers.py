"""A module-level function whose name is too short or too common to spread
alone (``send``/``recv``: sockets and pipes have them too) spreads with its
module (issue 14): a pipeline engine whose methods only call
``p2p.send(...)``/``p2p.recv(...)``, the p2p module's functions that
broadcast over a pair group, is analysed in depth, so a rank-local test
around such a call is found, as it is for a long-named wrapper.  A ``send``
of another receiver makes nothing deep."""

import textwrap

from cslint.api import check_paths

_P2P = """
    import torch.distributed as dist

    _pairs = {}


    def _pair(a, b):
        return _pairs[(min(a, b), max(a, b))]


    def send(tensor, dest_stage):
        me = dist.get_rank()
        return dist.broadcast(tensor, me, group=_pair(me, dest_stage))


    def recv(tensor, src_stage):
        me = dist.get_rank()
        return dist.broadcast(tensor, src_stage, group=_pair(src_stage, me))
"""

_ENGINE = """
    import os

    from . import p2p


    class StageEngine:
        def __init__(self, prev_stage, next_stage):
            self.prev_stage = prev_stage
            self.next_stage = next_stage
            self.buffers = {}

        def exec_recv(self, slot):
            if os.path.exists("/tmp/stage_ready"):
                p2p.recv(self.buffers[slot], self.prev_stage)
"""

_IMPORTED = """
    import os

    from .p2p import send


    def push(tensor, next_stage):
        if os.path.exists("/tmp/stage_ready"):
            send(tensor, next_stage)
"""

_OTHER_RECEIVER = """
    import os


    def push(conn, tensor):
        if os.path.exists("/tmp/stage_ready"):
            conn.send(tensor)
"""


def _findings(tmp_path, **files) -> list:
    package = tmp_path / "pipe"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "p2p.py").write_text(textwrap.dedent(_P2P))
    for name, text in files.items():
        (package / f"{name}.py").write_text(textwrap.dedent(text))
    return sorted((f.path.rsplit("/", 1)[-1], f.line, f.code) for f in check_paths([str(package)]).findings)


def test_a_short_named_function_called_through_its_module_is_followed(tmp_path):
    assert _findings(tmp_path, engine=_ENGINE) == [("engine.py", 15, "CSL101")]


def test_a_short_named_function_imported_from_its_module_is_followed(tmp_path):
    assert _findings(tmp_path, stage=_IMPORTED) == [("stage.py", 9, "CSL101")]


def test_a_send_of_another_receiver_is_not_the_module_function(tmp_path):
    assert _findings(tmp_path, sockets=_OTHER_RECEIVER) == []
