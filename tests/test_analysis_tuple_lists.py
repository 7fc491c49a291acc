"""A local list filled only by appending tuples written out, one length for
all, and read back by unpacking each element into as many names, hands each
name what was appended at its position (issue 14, tuple-element-taint;
``analysis/tuplelists.py``).

The shape: a receiver sizes each tensor from the metadata every rank got
alike, decides from its element count and the gather group's size whether to
receive only this rank's row and all-gather the rows afterwards, and queues
``(key, tensor, use_all_gather)`` until the batched receives are done.  The
row is this rank's own (it holds the rank in what it is), the flag is not:
read back position by position, the flag that decides the all-gather is the
same on every rank.  Before, every name unpacked from the queue held the
whole tuple, so the flag took on the rank that picked the row.

What must still be reported: a flag that itself reads this rank's id, a
list that also grows otherwise (``extend``, ``+=``, through another name, a
helper it is handed), tuples of different lengths, and an unpacking into
fewer or more names than the tuples hold."""

import textwrap

from cslint.api import check_source


def _codes(source, **kw):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source), report="per-site", **kw).findings]


_HEAD = """
    import torch
    import torch.distributed as dist


    def receive(metadata, gather_group, src):
        pending = []
        ops = []
        for key, size in metadata:
            tensor = torch.empty(size)
            use_all_gather = gather_group is not None and tensor.numel() % gather_group.world_size == 0
            if use_all_gather:
                tensor = tensor.reshape(gather_group.world_size, -1)[gather_group.rank_in_group]
            ops.append(dist.P2POp(dist.irecv, tensor, src))
            {store}
        for req in dist.batch_isend_irecv(ops):
            req.wait()
        received = {{}}
        {loop}
            if use_all_gather:
                tensor = gather_group.all_gather(tensor, dim=0)
            received[key] = tensor
        return received
"""


def _receive(store="pending.append((key, tensor, use_all_gather))",
             loop="for key, tensor, use_all_gather in pending:", extra=""):
    return _HEAD.format(store=store, loop=loop) + extra


def test_the_flag_read_back_by_position_is_agreed():
    assert _codes(_receive()) == []


def test_a_flag_that_reads_this_rank_still_differs():
    store = "pending.append((key, tensor, gather_group.rank_in_group == 0))"
    assert [code for code, _ in _codes(_receive(store=store))] == ["CSL101"]


def test_a_position_holding_this_rank_still_differs():
    store = "pending.append((key, tensor, use_all_gather, gather_group.rank_in_group))"
    loop = "for key, tensor, use_all_gather, owner in pending:\n            if owner == 0:\n" \
           "                dist.barrier()"
    assert _codes(_receive(store=store, loop=loop)) == [("CSL101", 21)]


def test_a_list_that_also_grows_otherwise_keeps_the_whole_tuple():
    for other in ("pending.extend(extra)", "pending += extra", "alias = pending\n            alias.append(extra)",
                  "fill(pending)"):
        store = "pending.append((key, tensor, use_all_gather))\n            " + other
        source = _receive(store=store) + "\n\n    def fill(xs):\n        xs.append(None)\n" \
            if other.startswith("fill") else _receive(store=store)
        source = source.replace("        pending = []\n", "        pending = []\n        extra = []\n")
        assert [code for code, _ in _codes(source)] == ["CSL101"], other


def test_tuples_of_different_lengths_keep_the_whole_tuple():
    store = "pending.append((key, tensor, use_all_gather))\n            pending.append((key, tensor))"
    assert [code for code, _ in _codes(_receive(store=store))] == ["CSL101"]


def test_an_unpacking_of_another_length_keeps_the_whole_tuple():
    store = "pending.append((key, tensor, use_all_gather, size))"
    assert [code for code, _ in _codes(_receive(store=store))] == ["CSL101"]
