"""A rank asked of a group held by a local name (``process_group =
self.real_dp_process_group[i]; rank = dist.get_rank(group=process_group)``,
as DeepSpeed's ZeRO optimizers ask it) differs only along the dimensions of
the group every binding of that local names (``localgroups.local_group``; an
element of a container of groups names the group its text names), so a test
of it is harmless under a collective over another dimension's group (issue
14).  A local bound to an element of a container whose name says no group
still spans every dimension."""

import textwrap

from cslint.api import check_source

SOURCE = """
    import torch.distributed as dist


    class Sharded:
        def __init__(self, dp_groups, groups, tp_group):
            self.real_dp_process_group = dp_groups
            self.groups = groups
            self.tp_group = tp_group

        def under_tp(self, i, t):
            process_group = self.real_dp_process_group[i]
            rank = dist.get_rank(group=process_group)
            if rank == 0:
                dist.all_reduce(t, group=self.tp_group)

        def under_its_own_group(self, i, t):
            process_group = self.real_dp_process_group[i]
            rank = dist.get_rank(group=process_group)
            if rank == 0:
                dist.all_reduce(t, group=process_group)

        def unnamed(self, i, t):
            process_group = self.groups[i]
            rank = dist.get_rank(group=process_group)
            if rank == 0:
                dist.all_reduce(t, group=self.tp_group)
"""


def _findings():
    return [(f.code, f.line, f.group) for f in check_source(textwrap.dedent(SOURCE)).findings]


def test_a_rank_in_a_group_held_by_a_local_differs_along_that_group_only():
    # VALID: the data-parallel rank decides nothing a tensor-parallel all-reduce's members disagree on
    assert ("CSL101", 15, "tp") not in _findings()


def test_the_same_rank_still_endangers_its_own_group_and_an_unnamed_group_spans_everything():
    # INVALID: the all-reduce runs over the very data-parallel group the rank is asked of; a
    # group taken from a container whose name says nothing may be any group
    assert _findings() == [("CSL101", 21, "dp"), ("CSL101", 27, "tp")]
