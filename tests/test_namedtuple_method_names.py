"""A call of a namedtuple's own method (``coord._replace(stage=s)``,
``_asdict``, ``_make``) on a receiver of unknown type is not resolved to the
one project class that defines a method of that name (issue 14,
name-resolution-wrong-target); a receiver typed as that class still reaches
it."""

import textwrap

from cslint.api import check_source


def _lines(source, **kw):
    return sorted(f.line for f in check_source(textwrap.dedent(source), report="per-site", **kw).findings)


def test_a_namedtuple_method_name_on_an_unknown_receiver_is_no_project_method():
    assert _lines("""
        import collections

        import torch.distributed as dist

        Coord = collections.namedtuple("Coord", ["stage", "replica"])


        class ShardSwapper:
            def __init__(self, group):
                self.group = group

            def _replace(self, shard):
                dist.all_reduce(shard, group=self.group)
                return shard

            def swap(self, shard):
                return self._replace(shard)


        def peer_rank(table, stage, **moved):
            here = table.coord_of(dist.get_rank())
            there = here._replace(stage=stage, **moved)
            return table.rank_of(there)


        def first_stage_peer(table, stage):
            if dist.get_rank() == 0:
                return peer_rank(table, stage, replica=0)
            return None


        def swap_on_first(group, shard):
            swapper = ShardSwapper(group)
            if dist.get_rank() == 0:
                swapper.swap(shard)              # reported: the swapper reduces over its group
    """) == [36]
