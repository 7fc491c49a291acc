"""A function that hands back a dict display with constant keys is read back
per key: ``plan = build(sizes, rank); if plan["wraps"]:`` reads the value
``build`` returns under ``"wraps"`` alone, as ``a, b = f()`` reads each element
of a tuple alone (``Variant.return_keys`` beside ``Variant.return_parts``).
A key whose value this rank's id reaches still differs; so does every key
where some return writes out another dict or something else, and a test
choosing the return reaches each key."""

import textwrap

from cslint.api import check_source


def _codes(source, **kw):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source), **kw).findings]


_PLAN = """
    import torch.distributed as dist

    def layout(lengths, world, rank):
        first = rank * sum(lengths) // world
        owned = [n for n in lengths if n > first]
        wraps = any(n % world for n in lengths)
        {returns}

    def step(t, lengths):
        rank = dist.get_rank()
        {read}
            dist.all_reduce(t)
"""

_ONE_DICT = 'return {"wraps": wraps, "owned": owned, "first": first}'


def _plan(returns=_ONE_DICT, read='plan = layout(lengths, dist.get_world_size(), rank)\n        if plan["wraps"]:'):
    return _PLAN.replace("{returns}", returns).replace("{read}", read)


def test_a_key_no_rank_id_reaches_agrees_through_a_name():
    assert _codes(_plan()) == []


def test_a_key_no_rank_id_reaches_agrees_read_off_the_call():
    assert _codes(_plan(read='if layout(lengths, 8, rank)["wraps"]:')) == []


def test_a_key_the_rank_id_reaches_still_differs():
    read = 'plan = layout(lengths, dist.get_world_size(), rank)\n        if plan["owned"]:'
    assert _codes(_plan(read=read)) == [("CSL101", 14)]


def test_a_key_the_rank_id_reaches_read_off_the_call_still_differs():
    assert _codes(_plan(read='if layout(lengths, 8, rank)["first"] > 0:')) == [("CSL101", 13)]


def test_another_key_set_on_some_return_keeps_the_whole_dict():
    returns = 'if wraps:\n            return {"wraps": first > 0}\n        ' + _ONE_DICT
    assert _codes(_plan(returns=returns)) == [("CSL101", 16)]


def test_a_return_of_another_kind_keeps_the_whole_dict():
    returns = 'if not lengths:\n            return dict(wraps=first)\n        ' + _ONE_DICT
    assert _codes(_plan(returns=returns)) == [("CSL101", 16)]


def test_a_rank_test_choosing_the_return_reaches_every_key():
    returns = 'if first > 0:\n            return {"wraps": False, "owned": [], "first": 0}\n        ' + _ONE_DICT
    assert _codes(_plan(returns=returns)) == [("CSL101", 16)]
