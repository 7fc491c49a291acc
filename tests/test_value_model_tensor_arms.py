"""An ``if``/``else`` whose arms both bind a name to a tensor (the root's
serialised payload, ``torch.cat(parts)``, or a view of a buffer it made; the
others an empty buffer, ``torch.empty(n)``) decides what the name holds and
its size, never its kind: the test reaches it as a length made from values
(``atoms.SIZED``, :mod:`cslint.analysis.tensorarms`), so a type test of it
(``isinstance``, ``torch.is_tensor``, torch's override check) is the same on
every rank.  Each shape is paired with the reads that must still be
reported: the tensor's length, an arm that binds or hands back None, an arm
that binds something else after the tensor, and whether it is None (read as
its length, which a length made from values still decides: ``next(it,
None)`` of an iterator over a slice)."""

import textwrap

from cslint.api import check_source


def _codes(source):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source)).findings]


_ROOT_OR_BUFFER = """
    import torch
    import torch.distributed as dist


    def share(payload, group):
        rank = dist.get_rank(group)
        if rank == 0:
            buf = {root}
        else:
            buf = {other}
        if {test}:
            dist.broadcast(buf, src=0, group=group)
        return buf
"""


def _root_or_buffer(root="torch.cat(payload)", other="torch.empty(16, dtype=torch.uint8)",
                    test="isinstance(buf, torch.Tensor)"):
    return _codes(_ROOT_OR_BUFFER.format(root=root, other=other, test=test))


def test_a_tensor_either_way_passes_a_type_test_alike():
    assert _root_or_buffer() == []
    assert _root_or_buffer(test="torch.is_tensor(buf)") == []


def test_its_length_still_differs():
    assert _root_or_buffer(test="len(buf) > 4") == [("CSL101", 13)]


def test_an_arm_binding_none_still_differs_in_kind():
    assert _root_or_buffer(other="None") == [("CSL101", 13)]


def test_an_arm_binding_another_value_still_differs_in_kind():
    assert _root_or_buffer(root="torch.cat(payload)\n            buf = payload") == [("CSL101", 14)]


def test_a_view_of_a_buffer_the_arm_made_is_a_tensor_too():
    source = """
        import torch
        import torch.distributed as dist


        def send(buf, group):
            if torch.is_tensor(buf):
                dist.broadcast(buf, src=0, group=group)


        def exchange(q, group, write_into):
            rank = dist.get_rank(group)
            into = write_into is not None and write_into(q[rank], None)
            if into:
                full = torch.empty(4, 8)
                merged = full[:, rank:rank + 1]
            else:
                merged = torch.empty(4, 8)
            send(merged, group)
            return merged
    """
    assert _codes(source) == []
    assert _codes(source.replace("full = torch.empty(4, 8)", "full = q")) == [("CSL101", 8)]


_HANDED_BACK = """
    import torch
    import torch.distributed as dist


    def exchange(q, group, write_into):
        rank = dist.get_rank(group)
        dist.barrier(group=group)
        into = write_into is not None and write_into(q[rank], None)
        if into:
            full = torch.empty(4, 8)
            merged = full[:, rank:rank + 1]
        else:
            merged = {other}
        return merged


    def step(q, group, write_into):
        out = exchange(q, group, write_into)
        if {test}:
            dist.barrier(group=group)
        return out
"""


def test_an_arm_handing_back_none_is_still_reported():
    assert _codes(_HANDED_BACK.format(other="None", test="out is None")) == [("CSL101", 21)]


def test_its_length_handed_back_is_still_reported():
    assert _codes(_HANDED_BACK.format(other="torch.empty(4, 8)", test="len(out) > 1")) == [("CSL101", 21)]
    assert _codes(_HANDED_BACK.format(other="torch.empty(4, 8)", test="out is None")) == [("CSL101", 21)]

