"""A method collective whose receiver each rank chooses
(``comm = a if rank == 0 else b; comm.all_reduce(x)``): the receiver's
communicator is the group the collective runs over, so ranks holding
different receivers wait in different communicators, as ranks handed
different groups do (``deep._group_handle`` hands the receiver to
``guards.Guards._group_choice`` as a group argument; sound54
pos/p8_receiver).  A receiver every rank chooses alike (by a size, a flag
the ranks share, a loop over every communicator) stays quiet."""

import textwrap

import pytest

from cslint.api import check_source


def _findings(body: str) -> list:
    source = "import torch.distributed as dist\n" + textwrap.dedent(body)
    return sorted((f.code, f.line) for f in check_source(source, report="per-site").findings)


CHOSEN = {
    "if_expression_of_fields": """
        class Pair:
            def __init__(self, a, b):
                self.a = a
                self.b = b

            def sync(self, x):
                comm = self.a if dist.get_rank() == 0 else self.b
                comm.all_reduce(x)
    """,
    "if_expression_of_parameters": """
        def sync(a, b, x):
            comm = a if dist.get_rank() == 0 else b
            comm.all_reduce(x)
    """,
    "if_statement": """
        def sync(tp, pp, x):
            if dist.get_rank() == 0:
                comm = tp.pynccl_comm
            else:
                comm = pp.pynccl_comm
            comm.all_reduce(x)
    """,
    "rank_indexed_local": """
        def sync(comms, x):
            comm = comms[dist.get_rank() % 2]
            comm.barrier()
    """,
}

#: a method collective called on no dotted text (an element, an expression) is
#: not matched as a collective at all (``ModuleContext.match_collective`` reads
#: the call's dotted text): a recognition gap of its own, not the choice's
UNMATCHED = {
    "rank_indexed": """
        def sync(comms, x):
            comms[dist.get_rank() % 2].all_reduce(x)
    """,
    "inline_if_expression": """
        def sync(a, b, x):
            (a if dist.get_rank() == 0 else b).all_gather(x)
    """,
}

ALIKE = {
    "chosen_by_size": """
        def sync(small, large, x):
            comm = small if x.numel() < 1024 else large
            comm.all_reduce(x)
    """,
    "one_receiver": """
        def sync(comm, x):
            if comm is None:
                return
            comm.all_reduce(x)
    """,
    "every_receiver_in_turn": """
        def sync(comms, x):
            for comm in comms:
                comm.all_reduce(x)
    """,
}


@pytest.mark.parametrize("name", sorted(CHOSEN))
def test_a_receiver_each_rank_chooses_is_reported(name):
    assert [code for code, _line in _findings(CHOSEN[name])] == ["CSL101"]


@pytest.mark.parametrize("name", sorted(ALIKE))
def test_a_receiver_every_rank_chooses_alike_stays_quiet(name):
    assert _findings(ALIKE[name]) == []


@pytest.mark.xfail(strict=True, reason="a method collective on an element or an expression is not matched")
@pytest.mark.parametrize("name", sorted(UNMATCHED))
def test_a_receiver_chosen_inline_is_reported(name):
    assert [code for code, _line in _findings(UNMATCHED[name])] == ["CSL101"]
