"""A tensor a library factory makes from a size alone (``torch.empty(n)``,
``torch.zeros(n)``: ``vocabulary.SIZE_ONLY_FACTORIES``) is a tensor on every
rank whatever ``n`` is: the size makes its length (``atoms.SIZED``), never its
kind.  torch's override check ``has_torch_function(args)`` reads only the kinds
of the values it is given (``vocabulary.KIND_METHODS``), so a receive buffer
sized from a count only the root knew, and then handed to a helper that
starts with that check, takes the same way out of the check on every rank.
Each shape is paired with the read that must still be reported: the
buffer's length, a dtype chosen by a rank test, a fill value whose type a
rank test chose, a value a rank test made None."""

import textwrap

from cslint.api import check_source


def _codes(source, **kw):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source), **kw).findings]


_SIZED = """
    import torch
    import torch.distributed as dist
    from torch.overrides import handle_torch_function, has_torch_function


    def gather_into(out, group):
        relevant = (out,)
        if has_torch_function(relevant):
            return handle_torch_function(gather_into, relevant, out, group=group)
        dist.all_reduce(out, group=group)


    def exchange(sizes: list, rank: int, group):
        out = {make}
        gather_into(out, group)
        return out
"""


def test_the_override_check_of_a_buffer_sized_by_this_rank_is_alike():
    assert _codes(_SIZED.replace("{make}", "torch.empty(sizes[rank], dtype=torch.uint8)")) == []


def test_zeros_sized_by_a_size_keyword_is_alike():
    assert _codes(_SIZED.replace("{make}", "torch.zeros(size=(sizes[rank],))")) == []


def test_a_dtype_a_rank_test_chose_still_differs():
    make = "torch.empty(sizes[rank], dtype=torch.uint8 if rank == 0 else torch.int64)"
    assert _codes(_SIZED.replace("{make}", make)) == [("CSL102", 11)]


def test_a_fill_value_whose_type_a_rank_test_chose_still_differs():
    # ``full`` makes a tensor of its fill value's type: that is no size
    assert _codes(_SIZED.replace("{make}", "torch.full((4,), 1 if rank == 0 else 0.5)")) == [("CSL102", 11)]


def test_a_value_a_rank_test_made_none_still_differs():
    assert _codes(_SIZED.replace("{make}", "torch.empty(4) if rank == 0 else None")) == [("CSL102", 11)]


def test_the_length_of_a_buffer_sized_by_this_rank_still_differs():
    assert _codes("""
        import torch
        import torch.distributed as dist


        def exchange(sizes: list, rank: int, group):
            out = torch.empty(sizes[rank])
            if out.shape[0] > 0:
                dist.all_reduce(out, group=group)
    """) == [("CSL101", 9)]


def test_a_receive_buffer_sized_from_the_roots_broadcast_count():
    # the root counts what it serialised, the others allocate a placeholder;
    # the count is broadcast in place through the module's own broadcast
    # (which starts with the override check, so no straight-line agreement),
    # and the buffer for the scatter is made from the agreed count.  The count
    # is a tensor on every rank, the root's or the placeholder
    # (analysis/tensorarms.py), so the broadcast's own override check is alike
    # too (it was reported here before: the rank test chose its kind)
    assert _codes("""
        import torch
        from torch.overrides import handle_torch_function, has_torch_function


        def _not_member(group):
            return group is None


        def broadcast(tensor, src=0, group=None):
            relevant = (tensor,)
            if has_torch_function(relevant):
                return handle_torch_function(broadcast, relevant, tensor, src=src, group=group)
            if _not_member(group):
                return
            group.broadcast([tensor], src).wait()


        def scatter(tensor, inputs=None, src=0, group=None):
            relevant = (tensor,)
            if has_torch_function(relevant):
                return handle_torch_function(scatter, relevant, tensor, inputs=inputs, src=src, group=group)
            if _not_member(group):
                return
            group.scatter([tensor], [inputs or []], src).wait()


        def scatter_objects(out, blobs, src, group):
            me = group.rank()
            if me == src:
                count = torch.tensor([max(len(b) for b in blobs)], dtype=torch.long)
            else:
                count = torch.zeros(1, dtype=torch.long)
            broadcast(count, src=src, group=group)
            buffer = torch.empty(count.item(), dtype=torch.uint8)
            scatter(buffer, inputs=blobs if me == src else None, src=src, group=group)
            out[0] = buffer
    """) == []
