"""The root's own copy of what it broadcast (issue 14): past an object
broadcast, the rank that is its root holds, in the value it stored into the
payload list, what every other rank got back (cslint/analysis/mirrors.py).
Stored as it is, the value is agreed whole; stored through a map that keeps a
tree's containers and replaces its leaves (torch's ``tree_map_only``), its
containers are agreed, and only the kinds of its leaves stay this rank's own
(atoms.KINDS_ONLY): a type test of a leaf still differs, as rank 0 holds a
tensor where the others hold a placeholder."""

import textwrap

from cslint.analysis.atoms import CONTENTS, IDENT, KIND, KINDS_ONLY, LENGTH, WHOLE, compose, project_source, source
from cslint.api import check_source

SHARED = """
import torch
import torch.distributed as dist
from torch.utils._pytree import tree_map_only


class Placeholder:
    def __init__(self, shape):
        self.shape = shape


def share_table(table, group):
    box = [None]
    if dist.get_rank(group) == 0:
        box[0] = STORED
    dist.broadcast_object_list(box, src=0, group=group)
    if dist.get_rank(group) == 0:
        return table
    return box[0]


def load(table, group, buf):
    table = share_table(table, group)
    for name in table["slots"]:
        for part in table["slots"][name]:
            dist.broadcast(buf, src=0, group=group)
    for name in table["extra"]:
        if isinstance(table["extra"][name], torch.Tensor):
            dist.broadcast(buf, src=0, group=group)
"""

MAPPED = "tree_map_only(torch.Tensor, lambda t: t if t.dim() == 0 else Placeholder(t.shape), table)"
LINES = SHARED.splitlines()
LOOP_LINE = LINES.index("            dist.broadcast(buf, src=0, group=group)") + 1  # (in both loops over keys)
TYPE_TEST_LINE = LINES.index("            dist.broadcast(buf, src=0, group=group)", LOOP_LINE) + 1


def _findings(source):
    result = check_source(textwrap.dedent(source), report="per-site")
    return sorted((f.line, f.code) for f in result.findings)


def test_root_returning_what_it_stored_agrees_with_the_receivers():
    # VALID: rank 0 returns the very table it put into the list
    assert _findings(SHARED.replace("STORED", "table")) == []


def test_a_mapped_tree_keeps_its_containers_and_leaves_its_leaves_kinds_local():
    # VALID for the loops over the tree's keys; INVALID for the type test of a
    # leaf: rank 0 holds the tensor, the others the placeholder
    assert _findings(SHARED.replace("STORED", MAPPED)) == [(TYPE_TEST_LINE, "CSL101")]


def test_a_stored_list_display_counts_too():
    source = SHARED.replace("    box = [None]\n    if dist.get_rank(group) == 0:\n        box[0] = STORED\n",
                            "    box = [None]\n    if dist.get_rank(group) == 0:\n        box = [table]\n")
    assert "box = [table]" in source
    assert _findings(source) == []


def test_a_map_no_preset_names_keeps_the_choice():
    # INVALID: nothing says what the project's own function keeps of the tree
    source = SHARED.replace("STORED", "strip(table)") + "\n\ndef strip(tree):\n    return {k: None for k in tree}\n"
    assert (LOOP_LINE, "CSL103") in _findings(source)


def test_a_root_that_changes_its_table_after_storing_it_keeps_the_choice():
    # INVALID: rank 0 adds a slot after the broadcast; the others never see it
    source = SHARED.replace("STORED", "table").replace(
        "    if dist.get_rank(group) == 0:\n        return table",
        "    table[\"slots\"][\"late\"] = [1]\n    if dist.get_rank(group) == 0:\n        return table")
    assert "late" in source
    assert (LOOP_LINE + 1, "CSL103") in _findings(source)


def test_a_broadcast_rooted_elsewhere_mirrors_nothing():
    # INVALID: rank 0 stored its table, but rank 1's list is what everyone got
    source = SHARED.replace("STORED", "table").replace("src=0, group=group)\n    if", "src=1, group=group)\n    if")
    assert "src=1" in source
    assert (LOOP_LINE, "CSL103") in _findings(source)


def test_returning_another_name_keeps_the_choice():
    # INVALID: rank 0 broadcast another table than the one it hands back
    source = SHARED.replace("STORED", "spare").replace("def share_table(table, group):",
                                                       "def share_table(table, group, spare=None):")
    assert "spare=None" in source
    assert (LOOP_LINE, "CSL103") in _findings(source)


def test_a_kinds_only_source_survives_a_type_test_alone():
    rank = source("rank id", "rank", "x.py", 1, (("*", frozenset({"tp"})),), whole=KINDS_ONLY)
    assert project_source(rank, IDENT) == rank
    assert project_source(rank, KIND).whole is False  # isinstance(leaf, T): a number read from the kind
    for transform in (LENGTH, CONTENTS, WHOLE, compose(WHOLE, KIND), compose(LENGTH, KIND)):
        assert project_source(rank, transform) is None, transform


def test_a_rank_test_of_a_group_rebound_in_between_keeps_the_choice():
    # INVALID: the second test asks this rank's place in another group
    source = SHARED.replace("STORED", "table").replace(
        "    dist.broadcast_object_list(box, src=0, group=group)\n",
        "    dist.broadcast_object_list(box, src=0, group=group)\n    group = None\n")
    assert "group = None" in source
    assert (LOOP_LINE + 1, "CSL103") in _findings(source)
