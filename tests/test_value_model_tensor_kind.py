"""A tensor's element type and the kind of device it lives on are its kind,
as a type test reads it (``atoms.KIND_ATTRIBUTES``, ``vocabulary.KIND_METHODS``):
cutting this rank's rows out of it with a rank-derived width, or filling it
with this rank's values, changes its length and contents, never its dtype or
whether it is on a GPU.  So ``x.is_cuda``, ``x.dtype``, ``x.element_size()``
of this rank's slice are the same on every rank, while its length is not,
and the dtype of a tensor a rank test chose still differs.  Each shape is
paired with the read that must still be reported."""

import textwrap

from cslint.api import check_source


def _codes(source, **kw):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source), **kw).findings]


_SLICED = """
    import torch
    import torch.distributed as dist


    def exchange(x: torch.Tensor, sizes: list, cp_rank: int, group):
        local_len = sizes[cp_rank]
        x = x[:local_len]
        {test}
            dist.barrier(group=group)
        return x
"""


def test_whether_this_ranks_slice_is_on_a_gpu_is_alike():
    assert _codes(_SLICED.replace("{test}", "if x.is_cuda:")) == []


def test_the_dtype_of_this_ranks_slice_is_alike():
    assert _codes(_SLICED.replace("{test}", "if x.dtype == torch.float16:")) == []


def test_the_element_size_of_this_ranks_slice_is_alike():
    assert _codes(_SLICED.replace("{test}", "if x.element_size() == 2 and not x.is_floating_point():")) == []


def test_the_length_of_this_ranks_slice_still_differs():
    assert _codes(_SLICED.replace("{test}", "if x.shape[0] > 0:")) == [("CSL101", 10)]


def test_a_kind_read_of_a_slice_handed_to_another_function_is_alike():
    # the slice reaches the test through a parameter, as a helper's argument
    assert _codes("""
        import torch
        import torch.distributed as dist


        def _sync(x, group):
            if x.is_cuda:
                dist.barrier(group=group)


        def exchange(x: torch.Tensor, sizes: list, cp_rank: int, group):
            x = x[:sizes[cp_rank]]
            _sync(x, group)
            return x
    """) == []


def test_the_dtype_of_a_tensor_a_rank_test_chose_still_differs():
    assert _codes("""
        import torch
        import torch.distributed as dist


        def exchange(x: torch.Tensor, rank: int, group):
            part = x if rank == 0 else x.float()
            if part.dtype == torch.float16:
                dist.barrier(group=group)
    """) == [("CSL101", 9)]


def test_whether_a_tensor_a_rank_test_chose_is_on_a_gpu_still_differs():
    assert _codes("""
        import torch
        import torch.distributed as dist


        def exchange(x: torch.Tensor, rank: int, group):
            part = x.cpu() if rank == 0 else x
            if part.is_cuda:
                dist.barrier(group=group)
    """) == [("CSL101", 9)]


# A library call that cuts a value into pieces (``vocabulary.PIECE_CALLS``)
# gives pieces of the value's own kind: the piece a rank index picks is this
# rank's share, a tensor on every rank, whose size may differ (an uneven
# ``tensor_split``).
_PIECE = """
    import torch
    import torch.distributed as dist


    def exchange(x: torch.Tensor, world: int, group):
        rank = dist.get_rank(group)
        {pick}
        if {test}:
            dist.barrier(group=group)
"""


def test_whether_this_ranks_piece_of_a_split_is_on_a_gpu_is_alike():
    source = _PIECE.replace("{pick}", "mine = x.tensor_split(world)[rank]").replace("{test}", "mine.is_cuda")
    assert _codes(source) == []


def test_the_dtype_of_a_piece_picked_from_a_name_bound_to_the_pieces_is_alike():
    source = _PIECE.replace("{pick}", "pieces = x.chunk(world)\n        mine = pieces[rank]") \
        .replace("{test}", "mine.dtype == torch.float16")
    assert _codes(source) == []


def test_the_size_of_this_ranks_piece_still_differs():
    source = _PIECE.replace("{pick}", "mine = x.tensor_split(world)[rank]").replace("{test}", "mine.shape[0] > 0")
    assert _codes(source) == [("CSL101", 10)]


def test_the_kind_of_an_element_a_split_of_the_tree_returns_still_differs():
    # the tree's own ``split`` says what its elements are: here a batch and None
    assert _codes("""
        import torch
        import torch.distributed as dist


        class Sharder:
            def split(self, batch):
                return [batch, None]


        def exchange(batch, group):
            rank = dist.get_rank(group)
            mine = Sharder().split(batch)[rank]
            if isinstance(mine, torch.Tensor):
                dist.barrier(group=group)
    """) == [("CSL101", 15)]
