"""A call of a tensor's view or copy method on a receiver of unknown type
(``layer.weight.narrow(0, lo, n)``) is not resolved to the one project class
that defines a method of that name (issue 14, name-resolution-wrong-target);
a receiver typed as that class still reaches it."""

import textwrap

from cslint.api import check_source


def _lines(source, **kw):
    return sorted(f.line for f in check_source(textwrap.dedent(source), report="per-site", **kw).findings)


def test_a_tensor_method_name_on_an_unknown_receiver_is_no_project_method():
    assert _lines("""
        import torch.distributed as dist


        class RowShard:
            def __init__(self, rank, rows):
                self.start = rank * rows

            def narrow(self, limit):
                if self.start > limit:
                    return None
                return self


        def gather_rows(layer, t, limit):
            part = layer.weight.narrow(0, 0, limit)
            if part is not None:
                dist.all_reduce(t)


        def gather_shard(rank, t, limit):
            shard = RowShard(rank, 8)
            part = shard.narrow(limit)
            if part is not None:                 # reported: the shard's start is this rank's
                dist.all_reduce(t)
    """) == [25]
