"""A chain of roles over one group's members (issue 14, complementary-role-arms).

A stage's head takes what the previous stage sends and hands it on to the followers of its own block
with a broadcast over the block's group: ``if part == HEAD: broadcast as source`` / ``elif part ==
FOLLOWER and rank in block_ranks: broadcast from the head``, with no ``else``.  The second test asks
by name for the members of the broadcast's own group (its rank list: the one ``new_group`` was made
from, the one of ``new_subgroups_by_enumeration``'s lists that holds this rank, or the group's
``get_process_group_ranks``), and every test names a role; the ranks no test matches are outside the group, and both arms issue the same
broadcasts, so no rank of the group skips them.

Still reported: the membership of another group's list, arms that issue different broadcasts, and
ranks told apart by their rank ids rather than by named roles (``me == target`` / ``me == src`` and
``rank == 0`` / ``rank == 1``: every other rank of the group is a bystander that takes no arm)."""

import ast
import textwrap

from cslint.api import check_source
from cslint.analysis.communicators import Communicators
from cslint.analysis.scope import collect_imports


def _lines(source):
    return sorted(f.line for f in check_source(textwrap.dedent(source), report="per-site").findings)


def _marked(source):
    return [n for n, text in enumerate(textwrap.dedent(source).splitlines(), 1) if "# reported" in text]


FAN = """
    import enum

    import torch.distributed as dist


    class Part(enum.Enum):
        FEEDER = "feeder"
        HEAD = "head"
        FOLLOWER = "follower"


    class Fan:
        def __init__(self, blocks, heads, feeders, stage):
            self.rank = dist.get_rank()
            self.parts = {}
            for block in blocks:
                for member in block:
                    self.parts[member] = Part.FOLLOWER
            for head in heads:
                self.parts[head] = Part.HEAD
            for feeder in feeders:
                self.parts[feeder] = Part.FEEDER
            self.block_group, _ = dist.new_subgroups_by_enumeration(blocks, backend="gloo")
            self.block_ranks = next((block for block in blocks if self.rank in block), [])
            self.head = heads[0]
            self.stage_ranks = list(stage)
            self.stage_group = dist.new_group(self.stage_ranks)

        def hand_on(self, payload):
            part = self.parts.get(self.rank)
            if part == Part.HEAD:
                dist.broadcast(payload, src=self.rank, group=self.block_group)
                return payload
            elif part == Part.FOLLOWER and self.rank in self.block_ranks:
                dist.broadcast(payload, src=self.head, group=self.block_group)
                return payload

        def hand_on_stage(self, payload):
            part = self.parts.get(self.rank)
            if part == "head":
                dist.broadcast(payload, src=self.rank, group=self.stage_group)
            elif part == "follower" and self.rank in self.stage_ranks:
                dist.broadcast(payload, src=self.head, group=self.stage_group)

        def hand_on_asked(self, payload):
            part = self.parts.get(self.rank)
            if part == Part.HEAD:
                dist.broadcast(payload, src=self.rank, group=self.block_group)
            elif part == Part.FOLLOWER and dist.get_rank() in dist.get_process_group_ranks(self.block_group):
                dist.broadcast(payload, src=self.head, group=self.block_group)

        def hand_on_other_list(self, payload):
            part = self.parts.get(self.rank)
            if part == Part.HEAD:
                dist.broadcast(payload, src=self.rank, group=self.block_group)  # reported
            elif part == Part.FOLLOWER and self.rank in self.stage_ranks:
                dist.broadcast(payload, src=self.head, group=self.block_group)  # reported

        def hand_on_twice(self, payload):
            part = self.parts.get(self.rank)
            if part == Part.HEAD:
                dist.broadcast(payload, src=self.rank, group=self.block_group)  # reported
                dist.broadcast(payload, src=self.rank, group=self.block_group)  # reported
            elif part == Part.FOLLOWER and self.rank in self.block_ranks:
                dist.broadcast(payload, src=self.head, group=self.block_group)  # reported

        def gather_on_target(self, state, target):
            for src in self.block_ranks:
                if self.rank == target:
                    dist.broadcast(state, src=src, group=self.block_group)  # reported
                elif self.rank in self.block_ranks and self.rank == src:
                    dist.broadcast(state, src=src, group=self.block_group)  # reported

        def first_two(self, payload):
            if self.rank == 0:
                dist.broadcast(payload, src=0, group=self.block_group)  # reported
            elif self.rank == 1 and self.rank in self.block_ranks:
                dist.broadcast(payload, src=0, group=self.block_group)  # reported
"""


def test_a_chain_of_named_roles_that_tests_the_groups_own_list_hands_out_its_members():
    assert _lines(FAN) == _marked(FAN)


def _members(source):
    communicators = Communicators()
    collect_imports(ast.parse(textwrap.dedent(source)), "m", False, communicators, None)
    return communicators.members


def test_the_list_of_an_enumeration_that_holds_this_rank_is_its_groups_own_list():
    assert _members(FAN) == {"self.block_group": "self.block_ranks", "self.stage_group": "self.stage_ranks"}
    # a list picked by anything else than this rank's membership is no group's own
    assert _members("""
        sub, _ = dist.new_subgroups_by_enumeration(lists)
        mine = next((r for r in lists if len(r) > 1), [])
        other = next((r for r in others if rank in r), [])
    """) == {}
    # the lists hold world ranks: a node-local rank found in one picks the wrong list
    assert _members("""
        sub, _ = dist.new_subgroups_by_enumeration(lists)
        mine = next((r for r in lists if local_rank in r), [])
    """) == {}
    assert _members("""
        sub, _ = dist.new_subgroups_by_enumeration(lists)
        mine = next((r for r in lists if global_rank in r), [])
    """) == {"sub": "mine"}
