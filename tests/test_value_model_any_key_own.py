"""A dict display with computed keys (``{(p_dtype, g_dtype): [...]}``)
returned by a function keeps the own structure of its values apart, as one
part for any value (``entries.ANY_VALUE_OWN``): ``for key, buckets in
plan.items(): for b in buckets:`` runs as many times as the comprehension
written under the key has generators, whatever each bucket holds.  A loop
over ``plan.items()`` runs once per key written (one key: once; several:
as the keys say).  A length the rank reaches, an element of a value, keys
that differ by rank and a name rebound on some ranks still differ."""

import textwrap

from cslint.api import check_source


def _codes(source, **kw):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source), **kw).findings]


_PLAN = """
    import torch.distributed as dist

    def owned_spans(lengths, rank, world):
        start = rank * sum(lengths) // world
        return [n for n in lengths if n > start]

    def build(lengths, world, dtype):
        rank = dist.get_rank()
        return {{keys}: [owned_spans(lengths, rank, world) for _ in range({count})]}

    def step(t, lengths):
        rank = dist.get_rank()
        plan = build(lengths, dist.get_world_size(), t.dtype)
        {read}
                dist.all_reduce(t)
"""

_ITEMS = "for key, buckets in plan.items():\n            for bucket in buckets:"


def _plan(count="len(lengths)", read=_ITEMS, keys="(dtype, world)"):
    return _PLAN.replace("{count}", count).replace("{read}", read).replace("{keys}", keys)


def test_a_loop_over_a_value_of_a_computed_key_display_runs_as_its_generators_say():
    assert _codes(_plan()) == []


def test_a_loop_over_the_values_view_runs_as_its_generators_say():
    assert _codes(_plan(read="for buckets in plan.values():\n            for bucket in buckets:")) == []


def test_a_loop_over_the_items_of_a_constant_keyed_display_runs_once_per_key():
    assert _codes(_plan(keys='"k"', read="for key, buckets in plan.items():\n            if True:")) == []


def test_a_value_as_long_as_the_rank_says_still_differs():
    assert _codes(_plan(count="rank")) == [("CSL103", 17)]


def test_an_element_of_a_value_still_differs():
    read = "for key, buckets in plan.items():\n            for piece in buckets[0]:"
    assert _codes(_plan(read=read)) == [("CSL103", 17)]


def test_keys_the_rank_decides_still_make_the_number_of_items_differ():
    source = _plan(read="for key, buckets in plan.items():\n            if True:").replace(
        "return {(dtype, world):", "return {dtype: [], rank:")
    assert _codes(source) == [("CSL103", 17)]


def test_a_value_name_rebound_on_some_ranks_still_differs():
    read = ("for key, buckets in plan.items():\n            if rank == 0:\n                buckets = [1]\n"
            "            for bucket in buckets:")
    assert _codes(_plan(read=read)) == [("CSL103", 19)]
