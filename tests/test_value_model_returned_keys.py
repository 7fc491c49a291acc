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


# -- such results appended to a field, read back by index and key ---------------------------

_FIELD = """
    import torch.distributed as dist

    class Planner:
        def setup(self, groups):
            self.plans = []
            rank = dist.get_rank()
            for g in groups:
                {append}

        @staticmethod
        def plan_for(lengths, rank):
            first = rank * sum(lengths)
            owned = []
            for n in lengths:
                if n > first:
                    owned.append(n)
            return {"wraps": any(n % 2 for n in lengths), "owned": owned}

        def step(self, t, groups):
            for i, g in enumerate(groups):
                plan = self.plans[i]
                if plan["{key}"]:
                    dist.all_reduce(t)
"""

_APPEND = "self.plans.append(self.plan_for(g, rank) if g else None)"


def _field(key="wraps", append=_APPEND, more=""):
    return _FIELD.replace("{append}", append).replace("{key}", key) + more


def test_a_key_no_rank_id_reaches_agrees_through_a_list_field():
    assert _codes(_field()) == []


def test_a_key_the_rank_id_reaches_through_a_list_field_still_differs():
    assert _codes(_field(key="owned")) == [("CSL101", 24)]


def test_an_append_on_some_ranks_reaches_every_key():
    append = "if rank == 0:\n                    " + _APPEND
    assert _codes(_field(append=append)) == [("CSL101", 25)]


def test_a_field_also_filled_another_way_keeps_its_whole_entries():
    more = "\n        def reset(self, plans):\n            self.plans = plans\n"
    assert _codes(_field(more=more)) == [("CSL101", 24)]


def test_another_value_appended_to_the_field_reaches_every_key():
    more = ("\n        def add(self, lengths):\n"
            "            self.plans.append({\"wraps\": dist.get_rank() > 0, \"owned\": lengths})\n")
    assert _codes(_field(more=more)) == [("CSL101", 24)]


# -- the display's own structure: never None, as long as its keys -----------------------------

def test_a_display_with_constant_keys_is_never_none_whatever_its_values():
    read = 'plan = layout(lengths, dist.get_world_size(), rank)\n        if plan is not None and len(plan) == 3:'
    assert _codes(_plan(read=read)) == []


def test_a_display_with_a_computed_key_is_as_long_as_its_distinct_keys():
    returns = 'return {first: wraps, "first": first}'
    read = 'plan = layout(lengths, dist.get_world_size(), rank)\n        if len(plan) == 2:'
    assert _codes(_plan(returns=returns, read=read)) == [("CSL101", 14)]


def test_a_rank_test_choosing_none_still_reaches_its_none_ness():
    returns = 'if first > 0:\n            return None\n        ' + _ONE_DICT
    read = 'plan = layout(lengths, dist.get_world_size(), rank)\n        if plan is None:'
    assert _codes(_plan(returns=returns, read=read)) == [("CSL101", 16)]
