"""A lookup in a table filled by entry stores alone (issue 14): ``found =
self.cache.get(key)`` is None where the key is missing and a stored value
else, so whether it is None follows whether the key is there and the own
structure (None-ness, length, kind) of the values stored into the table,
never what those values hold.  A cache of buffers every member exchanged
(a list with one element per member, whose elements differ from rank to
rank: this rank's own buffer at its own index) is found on every rank or on
none; a table that stores None on some ranks, or that is keyed by this
rank, still differs."""

import textwrap

from cslint.api import check_source


SOURCE = """
    from collections import OrderedDict

    import torch
    import torch.distributed as dist


    class Staging:
        def __init__(self, group, limit):
            self.group = group
            self.rank = dist.get_rank(group=group)
            self.world = dist.get_world_size(group=group)
            self.limit = limit
            self.buffers = OrderedDict()

        def _exchange(self, t):
            handles = [None] * self.world
            dist.all_gather_object(handles, t, group=self.group)
            out = []
            for member, handle in enumerate(handles):
                if member == self.rank:
                    out.append(t)
                    continue
                out.append(handle)
            return out

        def _keep(self, key, value):
            if len(self.buffers) >= self.limit:
                self.buffers.popitem(last=False)
            self.buffers[key] = value

        def get(self, size, dtype):
            key = (size, dtype)
            found = self.buffers.get(key)
            if found is None:
                found = self._exchange(torch.zeros(size, dtype=dtype))    # 36: found on every rank or none
                self._keep(key, found)
            return found


    class Pinned:
        def __init__(self, group):
            self.group = group
            self.rank = dist.get_rank(group=group)
            self.slots = {}

        def get(self, size):
            found = self.slots.get(size)
            if found is None:
                dist.barrier(group=self.group)                             # 50: None stored on some ranks
                self.slots[size] = [size] if self.rank == 0 else None
            return found


    class PerRankKey:
        def __init__(self, group):
            self.group = group
            self.rank = dist.get_rank(group=group)
            self.slots = {}

        def get(self, size):
            found = self.slots.get((size, self.rank % 2))
            if found is None:
                dist.barrier(group=self.group)                             # 64: keyed by this rank
                self.slots[(size, self.rank % 2)] = [size]
            return found
"""


def _lines():
    return sorted(f.line for f in check_source(textwrap.dedent(SOURCE), report="per-site").findings)


def test_a_lookup_of_stored_values_every_rank_keeps_alike_is_none_alike():
    assert 36 not in _lines()


def test_a_table_storing_none_on_some_ranks_still_differs():
    assert 50 in _lines()


def test_a_table_keyed_by_this_rank_still_differs():
    assert 64 in _lines()
