"""A group the function chooses is asked over every group its alternatives
name (``Cond.chosen_groups``, ``Cond.span_over``; reviewA54 on cc57a54).
The choice was asked over the group the argument's WHOLE text names, the
first dimension word in it: ``get_tp_group().cpu_group if
get_pp_group().is_first_rank else get_pp_group().cpu_group`` read as a TP
collective, where a stage predicate agrees, and was silent (with DP in
place of TP it was reported: the order of the words decided).  A rank
holding either alternative waits with the ranks of that group, so the
choice must agree over each of them: over TP and PP together here.  Not
over every dimension: a choice between two groups of one dimension by a
value that group agrees on stays quiet."""

import textwrap

import pytest

from cslint.api import check_source

_HEAD = """
    import torch.distributed as dist
    from vllm.distributed import get_pp_group, get_tp_group
"""


def _lines(body: str) -> list:
    source = textwrap.dedent(_HEAD) + textwrap.dedent(body)
    return sorted(f.line for f in check_source(source, report="per-site").findings)


CHOSEN_ACROSS_GROUPS = {
    "inline_tp_first": ("""
        def prepare(x):
            dist.all_reduce(x, group=get_tp_group().cpu_group if get_pp_group().is_first_rank
                            else get_pp_group().cpu_group)
    """, [6]),
    "inline_pp_first": ("""
        def prepare(x):
            dist.all_reduce(x, group=get_pp_group().cpu_group if get_pp_group().is_first_rank
                            else get_tp_group().cpu_group)
    """, [6]),
    # the local's name says tp; what it is bound to names tp and pp
    "local_named_for_one_group": ("""
        def prepare(x):
            tp_group = get_tp_group().cpu_group if get_pp_group().is_first_rank else get_pp_group().cpu_group
            dist.all_reduce(x, group=tp_group)
    """, [7]),
    "list_picked_by_stage": ("""
        def prepare(x):
            groups = [get_tp_group().cpu_group, get_pp_group().cpu_group]
            dist.all_reduce(x, group=groups[0 if get_pp_group().is_first_rank else 1])
    """, [7]),
    # the flag comes through a parameter: asked of the call, over both groups
    "flag_handed_in": ("""
        def run(x, group, first):
            dist.all_reduce(x, group=get_tp_group().cpu_group if first else group)

        def prepare(x):
            run(x, get_pp_group().cpu_group, get_pp_group().is_first_rank)
    """, [6]),
    "flag_handed_in_both_named": ("""
        def run(x, first):
            dist.all_reduce(x, group=get_tp_group().cpu_group if first else get_pp_group().cpu_group)

        def prepare(x):
            run(x, get_pp_group().is_first_rank)
    """, [6]),
}


@pytest.mark.parametrize("name", sorted(CHOSEN_ACROSS_GROUPS))
def test_a_choice_between_groups_of_different_dimensions_is_asked_over_both(name):
    body, lines = CHOSEN_ACROSS_GROUPS[name]
    assert _lines(body) == lines


def test_a_choice_between_groups_of_one_dimension_by_a_value_it_agrees_on_stays_quiet():
    assert _lines("""
        def prepare(x):
            dist.all_reduce(x, group=get_tp_group().cpu_group if get_pp_group().is_first_rank
                            else get_tp_group().device_group)
    """) == []


def test_a_choice_by_a_value_of_the_groups_own_dimension_stays_reported():
    assert _lines("""
        def prepare(x):
            dist.all_reduce(x, group=get_tp_group().cpu_group if get_tp_group().rank_in_group == 0
                            else get_tp_group().device_group)
    """) == [6]


@pytest.mark.xfail(strict=True, reason="name trust (house rule): a parameter NAMED tp_groups is read as TP groups")
def test_a_list_of_groups_handed_in_under_a_name_of_one_dimension():
    assert _lines("""
        def run(x, tp_groups, idx):
            dist.all_reduce(x, group=tp_groups[idx])

        def prepare(x, a, b):
            run(x, [a, b], 0 if get_pp_group().is_first_rank else 1)
    """) == [6]


def test_the_groups_a_choice_of_a_list_element_names_count_with_the_index():
    # Guards._choice: the index decides, and the alternatives are what each element names, a choice inside
    # one of them too (both arms): over TP and PP here
    assert _lines("""
        def prepare(x, flag):
            groups = [get_tp_group().cpu_group if flag else get_pp_group().cpu_group, get_tp_group().device_group]
            dist.all_reduce(x, group=groups[0 if get_pp_group().is_first_rank else 1])
    """) == [7]


def test_a_choice_inside_the_list_element_a_constant_index_picks():
    assert _lines("""
        def prepare(x):
            groups = [get_tp_group().cpu_group if dist.get_rank() == 0 else get_pp_group().cpu_group]
            dist.all_reduce(x, group=groups[0])
    """) == [7]
