"""What a method stores into its fields only where a rank test holds
(``rootside.rooted_writes``) and the methods of ``self`` it calls only where
a field is there (``rootside.present_calls``) are looked for by a walk of
its statements only where the call scan met what they are made of: an
assignment to a field of ``self`` (``FunctionScan.scan_calls``'
``self_assignments``), a call of a method of ``self`` (``self_calls``).
Most methods have neither, and their statements are not walked again
(issue 13).  A method that has them still gives them, and the rank-0 server
loop they mark is still paired (tests/test_analysis_root_side.py)."""

import ast
import textwrap

from cslint.analysis import rootside
from cslint.analysis.function import FunctionInfo
from cslint.analysis.scope import ModuleContext
from cslint.config import Settings
from cslint.presets import load_presets
from tests.test_analysis_root_side import _ROOT_ONLY, _server

KNOWLEDGE = load_presets(["torch_distributed"])

PLAIN = """
    class Server:
        def step(self, rank, inbox):
            if rank == 0:
                reply = inbox.get()
                other = [0 for x in reply]
                return other
            inbox.helper = self.size if rank else None

            def inner():
                self.hidden = rank
                self.poll()

            return inner
"""

ROOTED = """
    class Server:
        def step(self, rank, inbox):
            if rank == 0:
                self.queue = inbox.make()
            if self.queue is not None:
                self.serve()
"""


def _method(source: str) -> FunctionInfo:
    tree = ast.parse(textwrap.dedent(source))
    ctx = ModuleContext("m.py", "m", tree, KNOWLEDGE, Settings(), False)
    cls = tree.body[0]
    func = cls.body[0]
    info = FunctionInfo(ctx, func, f"{cls.name}.{func.name}", ("m", cls.name), True, {})
    info.scan_calls()
    return info


def _no_walk(*_args):
    raise AssertionError("the method's statements were walked again")


def test_a_method_with_no_field_assignment_and_no_call_on_self_is_not_walked_again(monkeypatch):
    info = _method(PLAIN)  # (it reads a field and stores into another object's; the nested function's stores are its own)
    assert info.self_assignments == [] and info.self_calls == ()
    monkeypatch.setattr(rootside, "_scan_writes", _no_walk)
    monkeypatch.setattr(rootside, "_scan_calls", _no_walk)
    assert rootside.rooted_writes(info) == () and rootside.present_calls(info) == ()


def test_a_method_with_them_still_gives_its_rooted_writes_and_present_calls():
    info = _method(ROOTED)
    assert rootside.rooted_writes(info) == (("queue", 5, (("rank", 0),)),)
    assert rootside.present_calls(info) == (("serve", "queue"),)


def test_a_queue_made_where_the_rank_id_is_the_group_s_stays_paired(tmp_path):
    assert _server(tmp_path, _ROOT_ONLY) == []
