"""A value broadcast in two stages over two orthogonal groups (issue 14):
the first ranks of the attention-TP groups share it along CP, then each
hands it to its TP group, so every rank of TP x CP gets the value of the one
rank first in both (``attn_cp_tp_broadcast_pyobj``'s shape).  A barrier over
either group gated on it is entered by all; a first stage on other ranks, a
second stage from another root or in the other order leaves the value
differing between CP peers."""

import textwrap

from cslint.api import check_source

_SOURCE = """
    import time

    import torch.distributed as dist
    from sglang.srt.distributed import get_attn_cp_group, get_attn_tp_group
    from sglang.srt.utils import broadcast_pyobj


    def broadcast_to_the_shard(data):
        tp_group = get_attn_tp_group()
        cp_group = get_attn_cp_group()
        if cp_group.world_size > 1 and tp_group.rank_in_group == 0:
            data = broadcast_pyobj(data, cp_group.rank, cp_group.cpu_group, src=cp_group.ranks[0])
        if tp_group.world_size > 1:
            data = broadcast_pyobj(data, tp_group.rank, tp_group.cpu_group, src=tp_group.ranks[0])
        return data


    def step(deadline):
        expired = time.perf_counter() > deadline
        expired = broadcast_to_the_shard(expired)
        if expired:
            dist.barrier(group=get_attn_cp_group().cpu_group)
        if expired:
            dist.barrier(group=get_attn_tp_group().cpu_group)
"""


def _lines(source: str) -> list:
    return sorted(f.line for f in check_source(textwrap.dedent(source), report="per-site").findings)


def test_a_value_broadcast_along_cp_by_the_tp_leaders_then_over_tp_agrees_over_both():
    assert _lines(_SOURCE) == []


def test_the_second_stage_unconditional_agrees_as_well():
    source = _SOURCE.replace("""        if tp_group.world_size > 1:
            data = broadcast_pyobj(data, tp_group.rank, tp_group.cpu_group, src=tp_group.ranks[0])""",
                             """        data = broadcast_pyobj(data, tp_group.rank, tp_group.cpu_group, src=tp_group.ranks[0])""")
    assert _lines(source) == []


def test_a_first_stage_on_other_ranks_than_the_second_roots_leaves_cp_peers_apart():
    source = _SOURCE.replace("tp_group.rank_in_group == 0", "tp_group.rank_in_group == 1")
    assert _lines(source) == [23]


def test_a_second_stage_from_another_root_leaves_cp_peers_apart():
    source = _SOURCE.replace("src=tp_group.ranks[0]", "src=tp_group.ranks[-1]")
    assert _lines(source) == [23]


def test_a_first_stage_gated_on_more_than_the_leader_leaves_cp_peers_apart():
    source = _SOURCE.replace("tp_group.rank_in_group == 0:", "tp_group.rank_in_group == 0 and data:")
    assert _lines(source) == [13, 23]   # (the first stage itself, reached by some CP peers only)


def test_the_stages_in_the_other_order_leave_cp_peers_apart():
    source = _SOURCE.replace(
        """        if cp_group.world_size > 1 and tp_group.rank_in_group == 0:
            data = broadcast_pyobj(data, cp_group.rank, cp_group.cpu_group, src=cp_group.ranks[0])
        if tp_group.world_size > 1:
            data = broadcast_pyobj(data, tp_group.rank, tp_group.cpu_group, src=tp_group.ranks[0])""",
        """        if tp_group.world_size > 1:
            data = broadcast_pyobj(data, tp_group.rank, tp_group.cpu_group, src=tp_group.ranks[0])
        if cp_group.world_size > 1 and tp_group.rank_in_group == 0:
            data = broadcast_pyobj(data, cp_group.rank, cp_group.cpu_group, src=cp_group.ranks[0])""")
    assert _lines(source) == [23, 25]
