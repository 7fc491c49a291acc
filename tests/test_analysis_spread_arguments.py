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


_PIECES = """
    import torch.distributed as dist


    def attend(q, k, v, step, groups, t):
        if groups > 1:
            dist.all_reduce(t)


    def run(t, n):
        rank = dist.get_rank()
        BODY
"""


def _pieces(body: str) -> str:
    return _PIECES.replace("BODY", textwrap.indent(textwrap.dedent(body), " " * 8).lstrip())


def test_valid_spread_of_pieces_whose_count_the_reaching_binding_writes_out():
    # this rank's pieces of three tensors are three arguments on every rank,
    # so the count written after them is the fifth, whatever the pieces hold:
    # the binding reaching the spread is the one just before it, whatever the
    # loop below binds to the same name later, and the list handed on beside
    # the call's result is handed on only once the spread was read
    assert codes(_pieces("""
        issued = []
        for call in range(2):
            full = [t for _ in range(3)]
            parts = [x.narrow(0, rank * n, n) for x in full]
            issued.append((parts, attend(*parts, None, 2, t)))
        for call, (parts, got) in enumerate(issued):
            print(call, parts, got)
    """)) == []
    # a nested function's own name of the same spelling is another name
    assert codes(_pieces("""
        def case(shard):
            full = [shard]
            return full
        full = [t, t, t]
        mine = [x[rank * n:(rank + 1) * n] for x in full]
        if n:
            attend(*mine, case(t), 2, t)
    """)) == []


def test_invalid_spreads_whose_reaching_binding_does_not_write_the_count_out():
    for body in (
        # an element added between the binding and the spread
        """
        mine = [x.narrow(0, rank * n, n) for x in (t, t, t)]
        mine.append(t)
        attend(*mine, None, 2, t)
        """,
        # a binding of one arm only: the other way in holds another list
        """
        mine = [t[rank:]]
        if n:
            mine = [x.narrow(0, rank * n, n) for x in (t, t, t)]
        attend(*mine, None, 2, t)
        """,
        # a loop's later pass holds what its body bound last
        """
        mine = [x.narrow(0, rank * n, n) for x in (t, t, t)]
        for call in range(2):
            attend(*mine, None, 2, t)
            mine = [t[rank:]]
        """,
        # a nested function that can add an element, called in between
        """
        mine = [x.narrow(0, rank * n, n) for x in (t, t, t)]
        def grow():
            mine.append(t)
        grow()
        attend(*mine, None, 2, t)
        """,
        # another name for the same list, through which an element is added
        """
        pieces = [x.narrow(0, rank * n, n) for x in (t, t, t)]
        mine = pieces
        pieces.append(t)
        attend(*mine, None, 2, t)
        """,
        # a call that can add one before the spread is read
        """
        mine = [x.narrow(0, rank * n, n) for x in (t, t, t)]
        attend(print(mine.append(t)), *mine, 2, t)
        """,
        # a filter decides how many pieces there are
        """
        mine = [x.narrow(0, rank * n, n) for x in (t, t, t) if x is not None]
        attend(*mine, None, 2, t)
        """,
        # a length this rank chooses
        """
        mine = [t for _ in range(rank)]
        attend(*mine, None, 2, t)
        """,
        # the rank-local value written at the count's own place
        """
        mine = [x.narrow(0, rank * n, n) for x in (t, t, t)]
        attend(*mine, None, rank, t)
        """,
    ):
        source = _pieces(body)
        assert codes(source) == [("CSL101", _line_of(source, "dist.all_reduce"))], body
