"""Tables of records, one record per key, each written out as a dict display
with constant keys, stored only on the ranks the record's group holds
(DeepSpeed's tied-weight table: ``comms[key] = {"ranks": ranks, "group":
new_group(ranks), "names": ...}`` under ``if rank in ranks``), read back one
field at a time (``for key, comm in comms.items(): for name in
comm["names"]: all_reduce(x, group=comm["group"])``).

What the model does today: the record is one value, so a field the analysis
reads as rank-dependent (``"ranks"``, built from this rank's own coordinate
by a coordinate table) makes every other field of the record and the loop
over the table read as rank-dependent.  What a per-field reading would
need (issue 14, the strict xfail below): ``comm["names"]`` reads the
``"names"`` value only, and the keys a rank holds are the keys of the
groups it is a member of, so the loop over them is entered alike by the
members of each group (the keys in one order on every rank).

The two FN xfails below are why that per-field step is not sound yet:
with the ``"ranks"`` field's taint gone, a record whose group is built
over another list than the one the store tests, and a record whose group is
reassigned under a rank test, are silent today; a per-field step must come
after they are reported.  The negatives (the read field itself
rank-chosen, the entry stored under a test of another list, a rank-dependent
early return, the collective over a rank-chosen field, keys that differ per
rank, a table handed in by a caller that builds it differently, the group
over another list, the group reassigned under a rank test) must stay
reported."""

import textwrap

import pytest

from cslint.api import check_source

# the tie table as the pipeline module builds it: the members of each tie
# group through a coordinate table, the entry stored only on its members
_TABLE = """
    import torch.distributed as dist


    class Grid:
        def __init__(self, coords):
            self.rank_of = {c: i for i, c in enumerate(coords)}
            self.global_rank = dist.get_rank()

        def coord_of(self, rank):
            for coord, idx in self.rank_of.items():
                if idx == rank:
                    return coord
            raise ValueError(rank)

        def stage_to_global(self, stage, **kwargs):
            me = self.coord_of(self.global_rank)
            return self.rank_of[me._replace(pipe=stage, **kwargs)]


    class Pipe:
        def __init__(self, keys, stages, data_size, coords, attrs):
            self.global_rank = dist.get_rank()
            self.grid = Grid(coords)
            self.keys = keys
            self.stages = stages
            self.data_size = data_size
            self.attrs = attrs
            self.pair_groups = [dist.new_group([0, 1]), dist.new_group([2, 3])]
            self.comms = self._index()

        def _index(self):
            comms = {}
            for key in sorted(self.keys):
                for dp in range(self.data_size):
                    ranks = []
                    for s in sorted(self.stages):
                        ranks.append(self.grid.stage_to_global(s, data=dp))
                    group = dist.new_group(ranks=ranks)
                    if self.global_rank in ranks:
                        comms[key] = {"ranks": ranks, "group": group, "names": self.attrs[key]}
            return comms

        def sync(self, x):
            for key, comm in self.comms.items():
                for name in comm["names"]:
                    dist.all_reduce(x, group=comm["group"])
"""

_RECORD = '{"ranks": ranks, "group": group, "names": self.attrs[key]}'
_SYNC_HEAD = "        for key, comm in self.comms.items():\n"
_RETURN = "        return comms\n"


def _source(*edits) -> str:
    source = textwrap.dedent(_TABLE)
    for old, new in edits:
        assert old in source, old
        source = source.replace(old, new)
    return source


def _collective_line(source: str, text: str = "dist.all_reduce(x, group=comm") -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


def _lines(source: str) -> list:
    return sorted(f.line for f in check_source(source, report="per-site").findings)


def test_the_shape_is_reported_today_through_the_ranks_field():
    # what the strict xfail below is about: the only finding is the loop over
    # the record's "names" field, and it goes once "ranks" leaves the record
    source = _source()
    assert _lines(source) == [_collective_line(source)]
    assert _lines(_source((_RECORD, '{"group": group, "names": self.attrs[key]}'))) == []


@pytest.mark.xfail(strict=True, reason="records of a table are read as one value: the 'ranks' field's taint "
                                       "reaches comm['names'] (per-field record reads not modelled)")
def test_a_field_of_a_record_reads_its_own_value():
    assert _lines(_source()) == []


STILL_REPORTED = {
    # the read field itself holds a count of this rank's own: the members' loops differ
    "the_read_field_is_rank_chosen": (
        (_RECORD, '{"ranks": ranks, "group": group, "names": list(range(self.global_rank))}'),),
    # the same without the ranks field
    "the_read_field_is_rank_chosen_alone": (
        (_RECORD, '{"group": group, "names": list(range(self.global_rank))}'),),
    # stored under a test of another list than the group's members: a member may hold no entry
    "stored_under_another_lists_test": (
        ("if self.global_rank in ranks:", "if self.global_rank in self.stages:"),
        (_RECORD, '{"group": group, "names": self.attrs[key]}')),
    # the group built over another list than the one the store tests (ranks field kept)
    "group_over_another_list": (
        ("group = dist.new_group(ranks=ranks)", "group = dist.new_group(ranks=sorted(self.stages))"),),
    # the record's group reassigned under a rank test after the table is built (ranks field kept)
    "group_reassigned_under_a_rank_test": (
        (_RETURN, "        for key in comms:\n            if self.global_rank % 2 == 0:\n"
                  "                comms[key][\"group\"] = self.pair_groups[0]\n" + _RETURN),),
    # the collective runs over another field, a group this rank picks by its own parity
    "collective_over_a_rank_chosen_field": (
        (_RECORD, '{"ranks": ranks, "group": group, "mine": self.pair_groups[self.global_rank % 2], '
                  '"names": self.attrs[key]}'),
        ('group=comm["group"]', 'group=comm["mine"]')),
    # the same without the ranks field
    "collective_over_a_rank_chosen_field_alone": (
        (_RECORD, '{"group": group, "mine": self.pair_groups[self.global_rank % 2], "names": self.attrs[key]}'),
        ('group=comm["group"]', 'group=comm["mine"]')),
    # the keys the table is built over differ per rank: members may walk them in other orders
    "keys_that_differ_per_rank": (
        ("for key in sorted(self.keys):", "for key in sorted(self.keys)[: self.global_rank % 2 + 1]:"),
        (_RECORD, '{"group": group, "names": self.attrs[key]}')),
    # the table handed in by a caller that builds it with a rank-chosen field
    "table_handed_in_by_a_caller": (
        ("    def sync(self, x):\n" + _SYNC_HEAD, "    def sync(self, x, comms):\n        for key, comm in comms.items():\n"),
        (_RETURN, _RETURN + "\n    def run(self, x):\n"
                  "        self.sync(x, {0: {\"group\": None, \"names\": list(range(self.global_rank))}})\n")),
}


@pytest.mark.parametrize("name", sorted(STILL_REPORTED))
def test_the_hazard_beside_it_stays_reported(name):
    source = _source(*STILL_REPORTED[name])
    assert _collective_line(source) in _lines(source)


def test_a_rank_dependent_early_return_before_the_loop_stays_reported():
    source = _source((_SYNC_HEAD, "        if self.global_rank == 0:\n            return\n" + _SYNC_HEAD),
                     (_RECORD, '{"group": group, "names": self.attrs[key]}'))
    assert _collective_line(source) in _lines(source)


# Silent today once the "ranks" field is out of the record: `if rank in ranks:` in a
# loop building the parts is read as every rank finding its own part (arms.selects_own_part
# takes the parts to cover the ranks), so every rank is taken to hold every key, whatever
# group the record holds.  The tie table's parts are the ranks of the tied stages only: a
# member of the other list that is in no part holds no entry and never enters.  A per-field
# record read would make the kept-ranks forms above silent too.
@pytest.mark.xfail(strict=True, reason="FN: entry stored under `rank in L` (parts taken to cover the ranks), its "
                                       "group built over another list: a member outside every part never enters")
def test_a_group_over_another_list_than_the_store_tests_is_reported():
    source = _source(("group = dist.new_group(ranks=ranks)", "group = dist.new_group(ranks=sorted(self.stages))"),
                     (_RECORD, '{"group": group, "names": self.attrs[key]}'))
    assert _collective_line(source) in _lines(source)


@pytest.mark.xfail(strict=True, reason="FN: an entry's group reassigned through comms[key]['group'] = ... under a "
                                       "rank test in the method that builds the table is not read as chosen where "
                                       "another method reads the table's field (guards._stored_entries reads the "
                                       "stores of the reading function only)")
def test_a_group_reassigned_under_a_rank_test_is_reported():
    source = _source((_RECORD, '{"group": group, "names": self.attrs[key]}'),
                     (_RETURN, "        for key in comms:\n            if self.global_rank % 2 == 0:\n"
                               "                comms[key][\"group\"] = self.pair_groups[0]\n" + _RETURN))
    assert _collective_line(source) in _lines(source)
