"""Elements of a tuple a callee of another file, or of a typed receiver, returns (issue 14).

``world, rank = replica_context()`` reads the group's size and this rank's place in it from one
call: the size is the same on every rank of the group, the rank is not.  A caller that unpacks
the result (or indexes it with a constant) reads each element alone wherever the whole-tree pass
finds the callee writing out a tuple of one length in every ``return``: a function of another
file, a method of a field whose class another file defines, a method of a local the function
built itself (``engine = cls(...)`` in a classmethod).  A callee whose returns are not all such
tuples still hands its whole result to every element."""

from __future__ import annotations

import textwrap

from cslint.api import check_paths, check_source

GROUPS = """
    import torch.distributed as dist


    def replica_context():
        if not dist.is_initialized():
            return 1, 0
        return dist.get_world_size(), dist.get_rank()


    def replica_pair():
        pair = (dist.get_world_size(), dist.get_rank())
        return pair


    class ShardPlan:
        def __init__(self, sizes):
            self.sizes = sizes


    class Sharder:
        def shard(self, batch):
            rank = dist.get_rank()
            local = batch[rank::2] if len(batch) > rank else None
            plan = ShardPlan([len(batch) // 2, len(batch) - len(batch) // 2])
            return local, plan

        def agree(self, counts):
            dist.all_reduce(counts)
            return counts
"""

RUNNER = """
    import torch.distributed as dist

    from groups import Sharder, replica_context, replica_pair


    class Runner:
        def __init__(self, sharded):
            self.sharder = Sharder() if sharded else None

        def share(self, payload):
            world, rank = replica_context()
            if world > 1:
                dist.broadcast_object_list([payload], src=0)

        def share_by_index(self, payload):
            if replica_context()[0] > 1:
                dist.broadcast_object_list([payload], src=0)

        def share_from_rank(self, payload):
            world, rank = replica_context()
            if rank == 0:
                dist.broadcast_object_list([payload], src=0)  # reported: the rank element

        def share_from_pair(self, payload):
            world, rank = replica_pair()
            if world > 1:
                dist.broadcast_object_list([payload], src=0)  # reported: the callee returns a name, not a tuple written out

        def sample(self, batch, out):
            plan = None
            if self.sharder is not None:
                local, plan = self.sharder.shard(batch)
            if plan is not None:
                dist.all_gather_object(out, plan.sizes)

        def sample_local(self, batch, out):
            local, plan = self.sharder.shard(batch)
            if local is None:
                return None
            dist.all_gather_object(out, local)  # reported: the local element is this rank's
"""


def _lines(tmp_path) -> list:
    (tmp_path / "groups.py").write_text(textwrap.dedent(GROUPS))
    (tmp_path / "runner.py").write_text(textwrap.dedent(RUNNER))
    result = check_paths([str(tmp_path)], jobs=1, report="per-site")
    return sorted((f.path.rsplit("/", 1)[-1], f.line) for f in result.findings)


def _reported(source: str) -> list:
    marked = [n for n, text in enumerate(textwrap.dedent(source).splitlines(), 1) if "# reported" in text]
    return marked


def test_an_element_of_another_files_returned_tuple_is_read_alone(tmp_path):
    expected = [("runner.py", line) for line in _reported(RUNNER)]
    assert _lines(tmp_path) == expected


TYPED = """
    import torch.distributed as dist


    class Publisher:
        def __init__(self, rank, name):
            self.rank = rank
            self.name = name

        @classmethod
        def start(cls, rank, name):
            engine = cls(rank, name)
            world, me = engine._world_and_rank()
            return engine._gather_names(world), engine._gather_from(me)

        def _world_and_rank(self):
            if dist.is_initialized():
                return dist.get_world_size(), self.rank
            return 1, self.rank

        def _gather_names(self, world):
            if world <= 1:
                return [self.name]
            gathered = [None] * world
            dist.all_gather_object(gathered, self.name)
            return gathered

        def _gather_from(self, me):
            if me != 0:
                return None
            gathered = [None] * 2
            dist.all_gather_object(gathered, self.name)  # reported: the rank element
            return gathered
"""


def test_an_element_of_a_typed_receivers_returned_tuple_is_read_alone():
    found = sorted(f.line for f in check_source(textwrap.dedent(TYPED), report="per-site").findings)
    assert found == _reported(TYPED)
