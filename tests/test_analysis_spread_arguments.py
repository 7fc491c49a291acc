"""A call that spreads its arguments (``f(*xs)``, ``f(**kw)``) passes them
to every parameter they may land in (issue 14, recall).  A factory that
hands its callers' arguments on to a constructor (``Req(*args,
**kwargs)``) makes each field what its callers pass, not only the first;
a sequence spread before other arguments may fill any parameter from its
position on; a function's own keyword arguments handed on may fill any
parameter no other argument binds.  Each INVALID shape sits beside a VALID one passing only values
every rank agrees on."""

import textwrap

from source_findings import codes

_FACTORY = """
    import torch.distributed as dist


    class Req:
        def __init__(self, rid, ids, flag):
            self.rid = rid
            self.ids = ids
            self.flag = flag


    def make(*args, **kwargs):
        return Req(*args, **kwargs)


    def run(t):
        req = make(CALL)
        if req.flag:
            dist.all_reduce(t)
"""

_GATE = """
    import torch.distributed as dist


    def gate(rid, ids, flag, t):
        if flag:
            dist.all_reduce(t)


    def run(t):
        BODY
"""


def _line_of(source: str, text: str) -> int:
    lines = textwrap.dedent(source).splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def _factory(call: str) -> str:
    return _FACTORY.replace("CALL", call)


def test_invalid_factory_forwarding_positional_arguments():
    source = _factory("0, [], dist.get_rank() == 0")
    assert codes(source) == [("CSL101", _line_of(source, "dist.all_reduce"))]


def test_invalid_factory_forwarding_keyword_arguments():
    source = _factory("rid=0, ids=[], flag=dist.get_rank() == 0")
    assert codes(source) == [("CSL101", _line_of(source, "dist.all_reduce"))]


def test_invalid_factory_forwarding_both():
    source = _factory("0, ids=[], flag=dist.get_rank() == 0")
    assert codes(source) == [("CSL101", _line_of(source, "dist.all_reduce"))]


def test_valid_factory_forwarding_agreed_values():
    assert codes(_factory("0, [], True")) == []
    assert codes(_factory("rid=0, ids=[], flag=False")) == []


def test_valid_factory_forwarding_a_rank_local_value_to_another_field():
    # each positional argument lands in the parameter at its own place: the
    # rank given as the request id is not the flag
    assert codes(_factory("dist.get_rank(), [], True")) == []


def test_invalid_sequence_spread_before_a_written_argument():
    source = _GATE.replace("BODY", "spec = (0, [], dist.get_rank() == 0)\n        gate(*spec, t)")
    assert codes(source) == [("CSL101", _line_of(source, "dist.all_reduce"))]


_RELAY = """

    def relay(t, **options):
        gate(0, [], t=t, **options)
"""


def test_invalid_keywords_handed_on():
    source = _GATE.replace("BODY", "relay(t, flag=dist.get_rank() == 0)") + _RELAY
    assert codes(source) == [("CSL101", _line_of(source, "dist.all_reduce"))]


def test_valid_spreads_of_agreed_values():
    assert codes(_GATE.replace("BODY", "spec = (0, [], True)\n        gate(*spec, t)")) == []
    assert codes(_GATE.replace("BODY", "relay(t, flag=True)") + _RELAY) == []
