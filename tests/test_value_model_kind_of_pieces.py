"""What decides only how many elements a value holds never decides its kind
(``atoms.SIZED``, a length made from values): a piece ``narrow`` cuts is of
the kind of the value cut, ``torch.is_tensor(x)`` is a type test as
``isinstance`` is, a list comprehension is a list and a list filled by
``append`` stays a list, however many elements each rank's data gives
them.  Each kind read is paired with a read of the size or of a value whose
kind really differs, which must still be reported."""

import textwrap

from cslint.api import check_source


def _lines(source):
    return sorted(f.line for f in check_source(textwrap.dedent(source), report="per-site").findings)


def test_a_narrowed_piece_is_of_the_kind_of_the_value_cut():
    assert _lines("""
        import torch
        import torch.distributed as dist


        def step(t, bounds, group):
            rank = dist.get_rank(group=group)
            start = bounds[rank]
            piece = t.view(-1).narrow(0, start=start, length=bounds[rank + 1] - start)
            if isinstance(piece, torch.Tensor):
                dist.all_reduce(t, group=group)
            other = torch.narrow(t, 0, start, 4)
            if other.dtype == torch.float32:
                dist.all_reduce(t, group=group)
            if piece.numel() > 0:
                dist.barrier(group=group)                                  # reported
    """) == [16]


def test_torch_is_tensor_reads_the_kind():
    assert _lines("""
        import torch
        import torch.distributed as dist


        def step(t, group):
            rank = dist.get_rank(group=group)
            if torch.is_tensor(t[:rank]):
                dist.all_reduce(t, group=group)
            maybe = t if rank == 0 else None
            if torch.is_tensor(maybe):
                dist.barrier(group=group)                                  # reported
    """) == [12]


def test_a_list_made_from_a_piece_is_a_list_of_any_length():
    assert _lines("""
        import torch
        import torch.distributed as dist


        def step(t, group):
            rank = dist.get_rank(group=group)
            rows = [row * 2 for row in t[:rank]]
            if isinstance(rows, list):
                dist.all_reduce(t, group=group)
            kept = []
            for row in t[:rank]:
                kept.append(row)
            if isinstance(kept, list):
                dist.all_reduce(t, group=group)
            if kept:
                dist.barrier(group=group)                                  # reported
            if len(rows) > 1:
                dist.barrier(group=group)                                  # reported
    """) == [17, 19]


def test_a_length_read_as_a_structure_is_no_length_to_a_kind_read_after_it():
    # a piece's width decides a test whose outcome picks the value (None or
    # the piece): its kind follows the width, through a local name as
    # through a field the whole-tree pass reads (transforms composed)
    assert _lines("""
        import torch
        import torch.distributed as dist


        def step(t, group):
            rank = dist.get_rank(group=group)
            piece = t[:rank]
            maybe = piece if len(piece) > 1 else None
            if isinstance(maybe, torch.Tensor):
                dist.all_reduce(t, group=group)                            # reported


        class Holder:
            def __init__(self, t, group):
                rank = dist.get_rank(group=group)
                self.piece = t[:rank]

            def step(self, t, group):
                maybe = self.piece if len(self.piece) > 1 else None
                if isinstance(maybe, torch.Tensor):
                    dist.all_reduce(t, group=group)                        # reported
                if isinstance(self.piece, torch.Tensor):
                    dist.barrier(group=group)
    """) == [11, 22]
