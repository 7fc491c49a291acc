"""Roles told apart by equality tests of this rank's own values (issue 14, complementary-role-arms).

A loop over the source ranks gathers every rank's state on a target rank: the target keeps its own
state and receives the others' with a broadcast, the source sends with the same broadcast, and the
other ranks take it and drop it.  No two arms issue the same collectives, yet on each iteration every
rank issues the same ones: none when the source is the target, one broadcast otherwise.  Without the
branch that takes and drops the broadcast, the ranks that are neither source nor target skip it and
the others wait: a real hang, still reported, and so is a chain without ``else`` whose arms are the
target's and the source's alone (the bystanders match no test).  So is a decision whose operand the arm reassigns, and
a test of a rank-local value that no role accounts for."""

import textwrap

from cslint.api import check_source


def _lines(source):
    return sorted(f.line for f in check_source(textwrap.dedent(source), report="per-site").findings)


def _marked(source):
    return [n for n, text in enumerate(textwrap.dedent(source).splitlines(), 1) if "# reported" in text]


GATHER = """
    import torch.distributed as dist


    def share(obj, src, group):
        if dist.get_rank() == src:
            dist.broadcast(obj, src=src, group=group)
            return obj
        buf = object()
        dist.broadcast(buf, src=src, group=group)
        return buf


    class Gatherer:
        def __init__(self, group):
            self.group = group
            self.me = dist.get_rank(group)
            self.size = dist.get_world_size(group)
            self.ranks = dist.get_process_group_ranks(group)
            self.kept = []

        def gather(self, state, target=0):
            empty = object()
            for src in range(self.size):
                if self.me == target:
                    if src == self.me:
                        self.kept.append(state)
                    else:
                        self.kept.append(share(empty, src, self.group))
                else:
                    if src == self.me:
                        share(state, self.me, self.group)
                    elif src != target:
                        share(empty, src, self.group)

        def gather_without_bystanders(self, state, target=0):
            empty = object()
            for src in range(self.size):
                if self.me == target:
                    if src == self.me:
                        self.kept.append(state)
                    else:
                        self.kept.append(share(empty, src, self.group))  # reported: the others skip it
                else:
                    if src == self.me:
                        share(state, self.me, self.group)  # reported: the bystanders skip it

        def gather_moved(self, state, target=0):
            empty = object()
            for src in range(self.size):
                if self.me == target:
                    target = src
                    if src == self.me:
                        self.kept.append(state)
                    else:
                        self.kept.append(share(empty, src, self.group))  # reported: the arm reassigns target
                else:
                    if src == self.me:
                        share(state, self.me, self.group)  # reported
                    elif src != target:
                        share(empty, src, self.group)  # reported

        def second_rank_skips(self, flag):
            if self.me == 0:
                dist.broadcast(flag, src=0, group=self.group)  # reported: rank 1 never joins it
            elif self.me == 1:
                pass
            else:
                dist.broadcast(flag, src=0, group=self.group)  # reported: rank 1 takes no broadcast

        def gather_flat(self, state, target=0):
            empty = object()
            for src in self.ranks:
                if self.me == target:
                    self.kept.append(share(empty, src, self.group))  # reported: the bystanders skip it
                elif self.me == src:
                    share(state, src, self.group)  # reported

        def gather_flat_bystanders(self, state, target=0):
            empty = object()
            for src in self.ranks:
                if self.me == target:
                    self.kept.append(share(empty, src, self.group))
                elif self.me == src:
                    share(state, src, self.group)
                else:
                    share(empty, src, self.group)
"""


def test_each_role_of_an_equality_decision_issues_what_the_others_issue():
    assert _lines(GATHER) == _marked(GATHER)


_ROUTED = """
    import torch.distributed as dist
    from vllm.distributed import get_tp_group


    def share(obj, src, group):
        if dist.get_rank() == src:
            dist.broadcast(obj, src=src, group=group)
            return obj
        buf = object()
        dist.broadcast(buf, src=src, group=group)
        return buf


    class Gatherer:
        def __init__(self):
            self.me = get_tp_group().rank_in_group
            self.size = get_tp_group().world_size
            self.kept = []

        def gather(self, state, target=0):
            empty = object()
            for src in range(self.size):
                if self.me == target:
                    if src == self.me:
                        self.kept.append(state)
                    else:
                        self.kept.append(share(empty, src, get_tp_group().device_group))
                else:
                    if src == self.me:
                        share(state, self.me, get_tp_group().device_group)
                    elif src != target:
                        share(empty, src, BYSTANDERS)
"""


def test_roles_taking_the_broadcast_through_another_communicator_stay_reported():
    # the bystanders take the source's broadcast through the group's gloo group, the source and the target
    # through its device group: the same collective over the same ranks, but two communicators
    # (uniformity.routes_part over each role's ways, hazards._roles_agree)
    assert _lines(_ROUTED.replace("BYSTANDERS", "get_tp_group().cpu_group")) == [28, 31, 33]


def test_roles_asking_one_communicator_still_agree():
    assert _lines(_ROUTED.replace("BYSTANDERS", "get_tp_group().device_group")) == []
