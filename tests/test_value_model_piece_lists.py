"""A list filled only with ``narrow`` pieces of one value (a partitioner
cutting a flat buffer into one piece per rank) holds pieces of that value's
kind: the piece a rank index picks out of it is this rank's partition, whose
dtype and device are the flat buffer's on every rank, while its size may
differ (``spans.PieceLists``, ``spans.picks_listed_piece``).  The list may be
a local, the result of a function of the file that fills and returns one, or
a field filled with such results, picked by ``[i][rank]``.  Each shape is
paired with a read or a filling that must still be reported."""

import textwrap

from cslint.api import check_source


def _codes(source, **kw):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source), **kw).findings]


# The shape of a ZeRO optimizer: the flat buffer of each group cut into one
# piece per rank by a method, the lists kept in a field, this rank's piece
# made the master copy, whose element size then sizes the gather's chunks.
_OPTIMIZER = """
    import torch
    import torch.distributed as dist


    class Partitioner:
        def __init__(self, flats, group):
            self.group = group
            self.partitions = []
            self.masters = []
            for i, flat in enumerate(flats):
                rank = dist.get_rank(group=group)
                pieces = self.cut(flat)
                self.partitions.append(pieces)
                self.masters.append(self.partitions[i][rank].detach().clone().float())

        def cut(self, tensor):
            world = dist.get_world_size(group=self.group)
            pieces = []
            start = 0
            for _ in range(world):
                pieces.append(tensor.narrow(0, start, tensor.numel() // world))
                start += tensor.numel() // world
            {extra}
            return pieces

        def gather(self, i, total):
            chunk = max(1, total // self.masters[i].{read})
            for start in range(0, total, chunk):
                dist.barrier(group=self.group)
"""


def _optimizer(read="element_size()", extra="pass"):
    return _OPTIMIZER.replace("{read}", read).replace("{extra}", extra)


def test_the_element_size_of_this_ranks_piece_of_a_field_of_piece_lists_is_alike():
    assert _codes(_optimizer()) == []


def test_the_size_of_this_ranks_piece_of_a_field_of_piece_lists_still_differs():
    assert _codes(_optimizer(read="numel()")) == [("CSL103", 30)]


def test_a_list_that_also_holds_another_value_is_no_list_of_pieces():
    # an element of another kind in the list: this rank may pick it
    extra = "pieces.append(torch.zeros(1, dtype=torch.int8))"
    assert _codes(_optimizer(extra=extra)) == [("CSL103", 30)]


def test_pieces_of_two_values_are_no_list_of_pieces_of_one():
    extra = "pieces.append(self.masters[0].narrow(0, 0, 1))"
    assert _codes(_optimizer(extra=extra)) == [("CSL103", 30)]


def test_a_list_handed_to_other_code_is_no_list_of_pieces():
    # the other code may put anything in it
    extra = "self.fill(pieces)"
    assert _codes(_optimizer(extra=extra)) == [("CSL103", 30)]


def test_a_field_filled_with_anything_else_is_no_field_of_piece_lists():
    source = _optimizer().replace("                self.partitions.append(pieces)\n",
                                  "                self.partitions.append(pieces)\n"
                                  "                self.partitions.append([flat.float(), flat.half()])\n")
    assert _codes(source) == [("CSL103", 31)]


_LOCAL = """
    import torch
    import torch.distributed as dist


    def exchange(flat: torch.Tensor, other: torch.Tensor, group):
        rank = dist.get_rank(group)
        world = dist.get_world_size(group)
        parts = []
        for r in range(world):
            parts.append({piece})
        mine = parts[rank]
        if {test}:
            dist.barrier(group=group)
"""


def test_the_dtype_of_this_ranks_piece_of_a_local_list_of_pieces_is_alike():
    source = _LOCAL.replace("{piece}", "flat.narrow(0, r, 1)").replace("{test}", "mine.dtype == torch.float16")
    assert _codes(source) == []


def test_the_dtype_of_a_piece_of_a_list_cut_from_two_values_still_differs():
    source = _LOCAL.replace("{piece}", "(flat if r else other).narrow(0, r, 1)") \
        .replace("{test}", "mine.dtype == torch.float16")
    assert _codes(source) == [("CSL101", 14)]


def test_the_dtype_of_a_piece_of_a_list_cut_from_a_rebound_value_still_differs():
    source = _LOCAL.replace("parts = []", "parts = []\n        flat = flat if rank else other") \
        .replace("{piece}", "flat.narrow(0, r, 1)").replace("{test}", "mine.dtype == torch.float16")
    assert _codes(source) == [("CSL101", 15)]


def test_the_emptiness_of_this_ranks_piece_of_a_local_list_still_differs():
    source = _LOCAL.replace("{piece}", "flat.narrow(0, r, r)").replace("{test}", "mine.numel() == 0")
    assert _codes(source) == [("CSL101", 14)]
