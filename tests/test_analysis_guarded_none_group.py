"""A None alternative of a chosen group that a truth test of the same local
skips is not a group the collective runs over.

``dp_group = None; for x in xs: dp_group = dp_group_of(x, dp_group); if
dp_group: all_reduce(out, group=dp_group)``: a rank reaching the all-reduce
passed ``if dp_group:`` with nothing rebinding ``dp_group`` since, so it
holds the DP group of an item it kept, never None (the world).  The
choice is asked over the groups the rank may hold there (DP), not over the
world; whether a rank skips the
collective is the ``if``'s own condition, asked as before.  Kept reported:
the test of another local, a rebinding after the test (also by a closure),
``if dp_group or flag:``, two real groups chosen by rank, a copy tested."""

import textwrap

import pytest

from cslint.api import check_source

_HEAD = """
    import torch.distributed as dist
    from megatron.core.parallel_state import (get_data_parallel_group, get_tensor_model_parallel_group,
                                               get_tensor_model_parallel_rank)
    from .grads import dp_group_of
"""


def _lines(body: str) -> list:
    source = textwrap.dedent(_HEAD) + textwrap.dedent(body)
    return sorted(f.line for f in check_source(source, report="per-site").findings)


SKIPPED_BY_THE_TEST = {
    # the DP dp_group of the items this TP rank keeps, or None where it keeps none
    "truth_test": """
        def total(items, out):
            dp_group = None
            for item in items:
                if item.owned or get_tensor_model_parallel_rank() == 0:
                    dp_group = dp_group_of(item, dp_group)
            if dp_group:
                dist.all_reduce(out, group=dp_group)
    """,
    "is_not_none_test": """
        def total(items, out):
            dp_group = None
            for item in items:
                if item.owned or get_tensor_model_parallel_rank() == 0:
                    dp_group = dp_group_of(item, dp_group)
            if dp_group is not None:
                dist.all_reduce(out, group=dp_group)
    """,
    "operand_of_and": """
        def total(items, out, enabled):
            dp_group = None
            for item in items:
                if item.owned or get_tensor_model_parallel_rank() == 0:
                    dp_group = dp_group_of(item, dp_group)
            if enabled and dp_group is not None:
                dist.all_reduce(out, group=dp_group)
    """,
    "conditional_expression": """
        def total(items, out):
            dp_group = get_data_parallel_group() if get_tensor_model_parallel_rank() == 0 or items else None
            if dp_group:
                dist.all_reduce(out, group=dp_group)
    """,
}


@pytest.mark.parametrize("name", sorted(SKIPPED_BY_THE_TEST))
def test_a_none_alternative_the_truth_test_skips_is_not_asked(name):
    assert _lines(SKIPPED_BY_THE_TEST[name]) == []


STILL_REPORTED = {
    # the test reads another local: None (the world) still reaches the collective
    "another_local_tested": ("""
        def total(items, out, ready):
            dp_group = None
            for item in items:
                if item.owned or get_tensor_model_parallel_rank() == 0:
                    dp_group = dp_group_of(item, dp_group)
            if ready:
                dist.all_reduce(out, group=dp_group)
    """, [13]),
    "rebound_after_the_test": ("""
        def total(items, out, stale):
            dp_group = None
            for item in items:
                if item.owned or get_tensor_model_parallel_rank() == 0:
                    dp_group = dp_group_of(item, dp_group)
            if dp_group:
                if stale:
                    dp_group = None
                dist.all_reduce(out, group=dp_group)
    """, [15]),
    "rebound_by_a_closure_after_the_test": ("""
        def total(items, out):
            dp_group = None

            def forget():
                nonlocal dp_group
                dp_group = None

            for item in items:
                if item.owned or get_tensor_model_parallel_rank() == 0:
                    dp_group = dp_group_of(item, dp_group)
            if dp_group:
                forget()
                dist.all_reduce(out, group=dp_group)
    """, [19]),
    "or_with_a_flag": ("""
        def total(items, out, flag):
            dp_group = None
            for item in items:
                if item.owned or get_tensor_model_parallel_rank() == 0:
                    dp_group = dp_group_of(item, dp_group)
            if dp_group or flag:
                dist.all_reduce(out, group=dp_group)
    """, [13]),
    # two real groups: the rank decides which one, whatever the test says of None
    "two_groups_chosen_by_rank": ("""
        def total(items, out):
            dp_group = None
            for item in items:
                dp_group = (get_data_parallel_group() if get_tensor_model_parallel_rank() == 0
                            else get_tensor_model_parallel_group())
            if dp_group:
                dist.all_reduce(out, group=dp_group)
    """, [13]),
    # the copy was taken before the rebinding that may make the group None
    "copy_tested_before_a_rebinding": ("""
        def total(items, out):
            dp_group = get_data_parallel_group()
            held = dp_group
            if not items and get_tensor_model_parallel_rank() == 0:
                dp_group = None
            if held:
                dist.all_reduce(out, group=dp_group)
    """, [13]),
}


@pytest.mark.parametrize("name", sorted(STILL_REPORTED))
def test_a_none_the_test_does_not_skip_stays_reported(name):
    body, lines = STILL_REPORTED[name]
    assert _lines(body) == lines
