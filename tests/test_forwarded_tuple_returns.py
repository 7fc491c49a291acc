"""Each element of a tuple a function hands back by returning the call of a
function of its own module that writes out a tuple of one length (issue
14): ``return split_rows(x, rank=rank)`` in ``split_for_decode``, where
every return of ``split_rows`` writes out ``x, height`` or ``x, None``.  A
caller in another module unpacking ``x, height = split_for_decode(...)``
reads ``height`` as ``split_rows`` hands it back (the height it was given,
or None where a setting every rank shares says so), not as the whole
result, which holds this rank's rows (``Transfer._forwarded_elements``: the
elements read apart as ``a, b = split_rows(...)`` reads them); the tests
choosing the forwarding return still reach every element."""

from package_findings import package_findings, write_package

SPLITTING = """
    import torch.distributed as dist

    SPLIT_DISABLED = False


    def split_rows(x, height, world_size, rank):
        if SPLIT_DISABLED:
            return x, None
        return x.chunk(world_size, dim=-2)[rank], height


    def split_for_decode(x, upsample, world_size, rank):
        return split_rows(x, height=x.shape[-2] * upsample, world_size=world_size, rank=rank)


    def split_first_only(x, upsample, world_size, rank):
        if rank == 0:
            return split_rows(x, x.shape[-2] * upsample, world_size, rank)
        return x, None


    def split_ragged(x, height, world_size, rank):
        parts = x.chunk(world_size, dim=-2)
        if rank >= len(parts):
            return x, None
        return parts[rank], height


    def split_ragged_for_decode(x, upsample, world_size, rank):
        return split_ragged(x, x.shape[-2] * upsample, world_size, rank)


    def gather_rows(x, height):
        if SPLIT_DISABLED:
            return x
        if height is None:
            return x
        out = [x.clone() for _ in range(dist.get_world_size())]
        dist.all_gather(out, x)
        return out


    def gather_first(x, height):
        if height is None:
            return x
        out = [x.clone() for _ in range(dist.get_world_size())]
        dist.all_gather(out, x)  # reported: only rank 0 gets a height (split_first_only)
        return out


    def gather_ragged(x, height):
        if height is None:
            return x
        out = [x.clone() for _ in range(dist.get_world_size())]
        dist.all_gather(out, x)  # reported: a rank past the last part gets None (split_ragged)
        return out
"""

DECODER = """
    import torch.distributed as dist

    from pkg.splitting import (
        gather_first, gather_ragged, gather_rows, split_first_only, split_for_decode, split_ragged_for_decode,
    )


    class Decoder:
        def __init__(self, world_size):
            self.world_size = world_size
            self.rank = dist.get_rank()

        def forward(self, x):
            height = None
            if self.world_size > 1:
                x, height = split_for_decode(x, 2, self.world_size, self.rank)
            x = x * 2
            if self.world_size > 1:
                x = gather_rows(x, height)
            return x

        def forward_first(self, x):
            height = None
            if self.world_size > 1:
                x, height = split_first_only(x, 2, self.world_size, self.rank)
            if self.world_size > 1:
                x = gather_first(x, height)
            return x

        def forward_ragged(self, x):
            height = None
            if self.world_size > 1:
                x, height = split_ragged_for_decode(x, 2, self.world_size, self.rank)
            if self.world_size > 1:
                x = gather_ragged(x, height)
            return x
"""


def test_an_element_of_a_forwarded_tuple_is_read_as_the_callee_hands_it_back(tmp_path):
    write_package(tmp_path, "pkg", {"splitting.py": SPLITTING, "decoder.py": DECODER})
    reported = sorted((f.path.rsplit("/", 1)[-1], f.line) for f in package_findings(tmp_path))
    marked = [("splitting.py", n) for n, text in enumerate(SPLITTING.splitlines(), 1) if "# reported" in text]
    assert reported == marked
