"""What ``grouptests.tests_own_group`` reads as a test of this rank's
membership of the collective's own group (issue 13: the text-only work is
done once, not once per group; the answers stay as they were).  Each form
is asked of the group it names and of another group, and a rank test of
the same group stays a condition."""

import pytest

from cslint.analysis import grouptests

OWN_GROUP_TESTS = [
    "group", "not group", "group is None", "group is not None", "group == None", "group != None",
    "group == GroupMember.NON_GROUP_MEMBER", "group is not dist.GroupMember.NON_GROUP_MEMBER",
    "_rank_not_in_group(group)", "not dist.is_group_member(group, 1)",
    "dist.get_rank() in dist.get_process_group_ranks(group)",
]


@pytest.mark.parametrize("text", OWN_GROUP_TESTS)
def test_each_form_asks_membership_of_the_group_it_names_only(text):
    assert grouptests.tests_own_group(text, {"self.other", "group"})
    assert not grouptests.tests_own_group(text, {"self.other"})
    assert not grouptests.tests_own_group(text, set())


@pytest.mark.parametrize("text", [
    "dist.get_rank(group) == 0",                               # the rank's place in the group
    "local_rank in dist.get_process_group_ranks(group)",       # a local rank is no world rank
    "group_size(group) > 1",                                   # neither in_group nor member
    "group == GroupMember.WORLD",
])
def test_a_rank_or_size_test_of_the_same_group_is_no_membership_test(text):
    assert not grouptests.tests_own_group(text, {"group"})


def test_a_call_text_gives_the_callee_last_part_and_the_first_argument():
    # one reading of a call's text for both membership forms (a callee asked of the group, its list of ranks)
    assert grouptests._call_text("dist.in_group(group, rank)") == ("in_group", "group")
    assert grouptests._call_text("not dist.is_group_member( g )") == ("is_group_member", "g")
    assert grouptests._call_text("not _rank_not_in_group(group)") == ("not _rank_not_in_group", "group")
    assert grouptests._call_text("group is None") is None
