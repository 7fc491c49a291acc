"""A number picks a row of an array, not its shape (issue 14, object-taint-spread).

A device mesh keeps the full rank layout as a tensor and finds this rank's row
by its coordinates (``coords = (full == rank).nonzero()``, then
``full[coords[0, 0]]``).  Every row of a tensor has one shape, so the row a
rank-local number picks holds other ranks (its contents) but has the same size
on every rank: the groups made once per column of that row are made alike.
A mask (a comparison as an index: as many rows as it holds true values), a
value the function does not type as an array, and a list indexed by the rank
still pick a structure of their own."""

import textwrap

from cslint.api import check_source


def _codes(source):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source), report="per-site").findings]


_MESH = """
    import torch
    import torch.distributed as dist


    class Mesh:
        def __init__(self, full: torch.Tensor):
            self.full = full
            self.width = self.row.size(0)

        @staticmethod
        def row_of(full{annotation}, rank):
            coords = (full == rank).nonzero()
            return full[{index}]

        @property
        def row(self):
            return self.row_of(self.full, dist.get_rank())

        def make_groups(self):
            for dim in range(self.width):
                dist.new_group(ranks=[dim])
"""


def _mesh(annotation=": torch.Tensor", index="coords[0, 0]", more=""):
    return _MESH.replace("{annotation}", annotation).replace("{index}", index) + more


def test_a_number_picks_a_row_of_the_same_shape_on_every_rank():
    assert _codes(_mesh()) == []


def test_a_number_made_from_positions_picks_a_row_too():
    more = textwrap.indent(textwrap.dedent("""
        @staticmethod
        def next_row_of(full: torch.Tensor, rank):
            coords = (full == rank).nonzero()
            at = coords[0, 0] + 1
            return full[at % 4, :]

        def make_next_groups(self):
            for dim in range(self.next_row_of(self.full, dist.get_rank()).size(0)):
                dist.new_group(ranks=[dim])
    """), "    ")
    assert _codes(_mesh(more=more)) == []


def test_a_mask_picks_as_many_rows_as_it_holds():
    assert _codes(_mesh(index="full == rank")) == [("CSL103", 22)]


def test_a_value_not_typed_as_an_array_keeps_the_picked_structure():
    assert _codes(_mesh(annotation="")) == [("CSL103", 22)]


def test_a_list_of_positions_picks_as_many_rows_as_it_holds():
    assert _codes(_mesh(index="[r for r in range(rank)]")) == [("CSL103", 22)]
