"""A loop over every rank of a group in which each rank skips the pass of its
own index (``for i in range(world_size): if i == rank: continue``: check
every peer but yourself) makes as many passes on every rank, so what the
rest of the body enters, every rank enters as often (``membership.skips_own_pass``).
A skip that is not of this rank's own pass, or not of a loop over the
group's ranks, or that leaves the loop, still differs."""

import textwrap

from cslint.api import check_source


def _codes(source):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source)).findings]


_PEERS = """
    import torch.distributed as dist

    _checked = {}


    def check_peer(src, dst):
        if not _checked:
            dist.barrier()
            _checked["done"] = True
        return True


    def can_reach_peers(rank: int, world_size: int) -> bool:
        for i in {iterable}:
            if {test}:
                {exit}
            if not check_peer(rank, i):
                return False
        return True


    def setup():
        return can_reach_peers(dist.get_rank(), dist.get_world_size())
"""


def _peers(iterable="range(world_size)", test="i == rank", exit="continue"):
    return _codes(_PEERS.replace("{iterable}", iterable).replace("{test}", test).replace("{exit}", exit))


def test_skipping_this_ranks_own_pass_is_alike():
    assert _peers() == []


def test_the_rank_on_either_side_and_a_range_from_zero():
    assert _peers(iterable="range(0, world_size)", test="rank == i") == []


def test_leaving_the_loop_at_this_ranks_index_still_differs():
    assert _peers(exit="break") == [("CSL102", 18)]


def test_a_loop_over_something_else_than_the_ranks_still_differs():
    assert _peers(iterable="range(world_size + 1)") == [("CSL102", 18)]


def test_a_skip_of_more_than_this_ranks_own_pass_still_differs():
    assert _peers(test="i <= rank") == [("CSL102", 18)]
