"""Fields unpacked from a call keep their own elements of what it returns
(``self.local, self.bounds = self._split(t)``), as local names do
(``Transfer._bind``): a callee of the module writing out one tuple shape
hands each field its own position, so the bounds, computed alike on every
rank, do not take the rank that picked the local piece."""

import textwrap

from cslint.api import check_source


def _lines(source):
    return sorted(f.line for f in check_source(textwrap.dedent(source), report="per-site").findings)


_PARTITIONED = """
    import torch
    import torch.distributed as dist


    def uniform_bounds(count, parts):
        bounds = [0] * (parts + 1)
        for p in range(parts):
            bounds[p + 1] = bounds[p] + count // parts
        return bounds


    class Partitioned:
        def __init__(self, tensor, group):
            self.parts = dist.get_world_size(group=group)
            self.rank = dist.get_rank(group=group)
            self.local, self.bounds = self._split(tensor)

        def _split(self, tensor):
            bounds = uniform_bounds(tensor.numel(), self.parts)
            start = bounds[self.rank]
            piece = tensor.view(-1).narrow(0, start, bounds[self.rank + 1] - start)
            return piece, bounds

        def meta(self):
            return torch.LongTensor(data=[self.parts, *self.bounds])


    class Engine:
        def __init__(self, group, dp_group):
            self.group = group
            self.dp_group = dp_group
            self.outputs = []

        def forward(self, outputs):
            part = Partitioned(outputs, self.group)
            self.outputs.append({read})

        def reduce(self):
            reduced = sum(self.outputs)
            if torch.is_tensor(reduced):
                dist.all_reduce(reduced, group=self.dp_group)
"""


def test_each_field_unpacked_from_a_call_holds_its_own_element():
    assert _lines(_PARTITIONED.replace("{read}", "part.meta()")) == []


def test_the_element_the_rank_picked_still_differs():
    # the piece's size follows the rank-picked start: a list of it has rank-dependent contents
    picked = _PARTITIONED.replace("{read}", "part.local").replace(
        "reduced = sum(self.outputs)", "reduced = self.outputs[0] if len(self.outputs[0]) > 1 else None")
    assert _lines(picked) == [42]
    starred = _PARTITIONED.replace("{read}", "part.meta()").replace(
        "self.local, self.bounds = self._split(tensor)", "self.local, *self.bounds = self._split(tensor)")
    assert _lines(starred) == [42]
