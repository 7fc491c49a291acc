"""The value a dict display with constant keys holds under a key keeps its
own structure apart, as a list a function returns directly does:
``plan = build(...); buckets = plan["buckets"]; for b in buckets:`` runs as
many times as the comprehension written under "buckets" has generators,
whatever each bucket holds (``shapes.returned_by_key`` gives each key's own
part, ``shapes.key_read_own`` reads it).  A length the rank reaches, an
element's own structure, and a key written to or rebound on some ranks
still differ."""

import textwrap

from cslint.api import check_source


def _codes(source, **kw):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source), **kw).findings]


_PLAN = """
    import torch.distributed as dist

    def owned_spans(lengths, rank, world):
        start = rank * sum(lengths) // world
        return [n for n in lengths if n > start]

    def build(lengths, world):
        rank = dist.get_rank()
        return {"buckets": [owned_spans(lengths, rank, world) for _ in range({count})], "world": world}

    def step(t, lengths):
        rank = dist.get_rank()
        plan = build(lengths, dist.get_world_size())
        {read}
            dist.all_reduce(t)
"""


def _plan(count="len(lengths)", read='buckets = plan["buckets"]\n        for bucket in buckets:'):
    return _PLAN.replace("{count}", count).replace("{read}", read)


def test_a_loop_over_the_list_under_a_key_runs_as_its_generators_say():
    assert _codes(_plan()) == []


def test_the_list_under_a_key_as_long_as_the_rank_says_still_differs():
    assert _codes(_plan(count="rank")) == [("CSL103", 17)]


def test_an_element_of_the_list_under_a_key_still_differs():
    read = 'buckets = plan["buckets"]\n        for piece in buckets[0]:'
    assert _codes(_plan(read=read)) == [("CSL103", 17)]


def test_a_key_written_on_some_ranks_still_differs():
    read = 'if rank == 0:\n            plan["buckets"] = []\n        buckets = plan["buckets"]\n        for b in buckets:'
    assert _codes(_plan(read=read)) == [("CSL103", 19)]


def test_a_name_rebound_on_some_ranks_still_differs():
    read = 'buckets = plan["buckets"]\n        if rank == 0:\n            buckets = []\n        for b in buckets:'
    assert _codes(_plan(read=read)) == [("CSL103", 19)]


def test_a_loop_straight_over_the_key_read_runs_as_its_generators_say():
    assert _codes(_plan(read='for bucket in plan["buckets"]:')) == []


def test_a_loop_straight_over_the_key_of_the_call_runs_as_its_generators_say():
    assert _codes(_plan(read='for bucket in build(lengths, 8)["buckets"]:')) == []


def test_a_loop_straight_over_a_key_written_on_some_ranks_still_differs():
    read = 'if rank == 0:\n            plan["buckets"] = []\n        for b in plan["buckets"]:'
    assert _codes(_plan(read=read)) == [("CSL103", 18)]


def test_a_loop_straight_over_an_element_under_the_key_still_differs():
    assert _codes(_plan(read='for piece in plan["buckets"][0]:')) == [("CSL103", 16)]
