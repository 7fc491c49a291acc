"""A function of the tree that hands back the pieces one library call cut a
value into hands back pieces of that value's kind, so the piece a rank-local
index picks from its result is of that kind on every rank (issue 14).

A row-parallel layer cuts its input along the last dimension with a helper
of another module (``split_last``: ``torch.split`` through the imported
module, handed back as a tuple, or as a tuple of each piece made contiguous)
and keeps the piece of its own rank.  The piece's contents and size follow
the rank; its kind does not: it is a tensor on every rank.  A type test of it
(``isinstance(x, tuple)``: a quantised method that also takes a pair) agrees,
and the all-reduce after it is reached alike, in the layer and in the method
it hands the piece to (whose parameter's own structure is what the callers
pass: the piece's size, never its kind).  Before, the pick read the rank
whole, kind included, wherever the pieces came from a call of the tree, and
``torch.split(x, n)`` through its module was not known to cut pieces at all
(only ``x.split(n)`` was).  A helper that hands back a list of values of
different kinds (a tensor and a pair) keeps the rank in the kind of what the
index picks, and so does a helper that cuts pieces only on some of its returns.
"""

import textwrap

from package_findings import package_findings, write_files

PIECES = """
    import torch


    def split_last(tensor, parts, contiguous=False):
        size = tensor.size()[-1] // parts
        pieces = torch.split(tensor, size, dim=-1)
        if contiguous:
            return tuple(piece.contiguous() for piece in pieces)
        return tuple(pieces)


    def chunks_of(tensor, parts):
        return list(tensor.chunk(parts, dim=0))


    def mixed(tensor, parts):
        return [tensor, (tensor, tensor)]


    def pieces_or_whole(tensor, parts):
        if parts > 1:
            return torch.split(tensor, tensor.size()[-1] // parts, dim=-1)
        return [tensor, (tensor, tensor)]


    def agree(tensor, group):
        torch.distributed.all_reduce(tensor, group=group)
        return tensor
"""

LAYER = """
    import torch
    import torch.distributed as dist

    from pkg.pieces import agree, chunks_of, mixed, pieces_or_whole, split_last


    class Fp4Method:
        def apply(self, layer, x):
            if isinstance(x, tuple):
                return x[0]
            dist.all_reduce(x, group=layer.group)            # VALID: every caller hands it a tensor
            return x


    class RowLayer:
        def __init__(self, group):
            self.rank = dist.get_rank(group)
            self.size = dist.get_world_size(group)
            self.group = group
            self.method = Fp4Method()

        def forward_handed(self, x):
            mine = split_last(x, self.size, contiguous=True)[self.rank].contiguous()
            return self.method.apply(self, mine)

        def sync(self, x):
            return agree(x, self.group)

        def forward(self, x):
            mine = split_last(x, self.size)[self.rank]
            if isinstance(mine, tuple):
                return mine
            dist.all_reduce(mine, group=self.group)          # VALID: a tensor on every rank
            return mine

        def forward_contiguous(self, x):
            pieces = split_last(x, self.size, contiguous=True)
            mine = pieces[self.rank].contiguous()
            if isinstance(mine, tuple):
                return mine
            dist.all_reduce(mine, group=self.group)          # VALID: a tensor on every rank
            return mine

        def forward_chunks(self, x):
            mine = chunks_of(x, self.size)[self.rank]
            if isinstance(mine, tuple):
                return mine
            dist.all_reduce(mine, group=self.group)          # VALID: a tensor on every rank
            return mine

        def forward_local(self, x):
            pieces = torch.split(x, x.size()[-1] // self.size, dim=-1)
            mine = pieces[self.rank]
            if isinstance(mine, tuple):
                return mine
            dist.all_reduce(mine, group=self.group)          # VALID: a tensor on every rank
            return mine

        def forward_mixed(self, x):
            mine = mixed(x, self.size)[self.rank]
            if isinstance(mine, tuple):
                return mine
            dist.all_reduce(mine, group=self.group)          # INVALID: rank 1 picks the pair
            return mine

        def forward_sometimes(self, x):
            mine = pieces_or_whole(x, self.size)[self.rank]
            if isinstance(mine, tuple):
                return mine
            dist.all_reduce(mine, group=self.group)          # INVALID: one return is no cut
            return mine

        def forward_nested(self, x):
            # nested past the limit on calls inside calls: the pick keeps its own reading when flattened
            mine = torch.relu(torch.tanh(torch.sigmoid(torch.abs(split_last(x, self.size)[self.rank]))))
            if isinstance(mine, tuple):
                return mine
            dist.all_reduce(mine, group=self.group)          # VALID: a tensor on every rank
            return mine

        def forward_size(self, x):
            mine = split_last(x, self.size)[self.rank]
            if mine.shape[-1] == 0:
                return mine
            dist.all_reduce(mine, group=self.group)          # INVALID: the pieces' sizes follow the index
            return mine
"""


def _marked(source, word):
    return sorted(i for i, line in enumerate(source.splitlines(), 1) if line.rstrip().endswith(word)
                  or f"# {word}:" in line)


def _layer_lines_flagged(root, files: dict) -> list:
    """Write ``files`` (path under ``root`` -> source) and lint ``root`` whole:
    the lines flagged in ``pkg/layer.py``."""
    findings = package_findings(write_files(root, files))
    return sorted({f.line for f in findings if f.path.endswith("layer.py")})


def test_a_piece_picked_from_a_helpers_cut_is_of_one_kind(tmp_path):
    layer = textwrap.dedent(LAYER)
    flagged = _layer_lines_flagged(tmp_path, {"pkg/__init__.py": "", "pkg/pieces.py": textwrap.dedent(PIECES),
                                              "pkg/layer.py": layer})
    assert flagged == _marked(layer, "INVALID")
    assert _marked(layer, "VALID")


def test_a_helper_module_with_another_collective_is_read_the_same(tmp_path):
    """The helpers' module holds one more collective: the same answer."""
    pieces = textwrap.dedent(PIECES) + textwrap.dedent("""

        def gather_rows(tensor, group):
            out = [torch.empty_like(tensor) for _ in range(torch.distributed.get_world_size(group))]
            torch.distributed.all_gather(out, tensor, group=group)
            return out
    """)
    layer = textwrap.dedent(LAYER)
    flagged = _layer_lines_flagged(tmp_path, {"pkg/__init__.py": "", "pkg/pieces.py": pieces, "pkg/layer.py": layer})
    assert flagged == _marked(layer, "INVALID")


HANDED = """
    import torch.distributed as dist

    from pkg.pieces import agree, mixed, split_last


    class Fp4Method:
        def apply(self, layer, x):
            if isinstance(x, tuple):
                return x[0]
            dist.all_reduce(x, group=layer.group)            # VALID: the row layer hands it a tensor
            return x


    class MixedMethod:
        def apply(self, layer, x):
            if isinstance(x, tuple):
                return x[0]
            dist.all_reduce(x, group=layer.group)            # INVALID: rank 1 is handed the pair
            return x


    class RowLayer:
        def __init__(self, group):
            self.rank = dist.get_rank(group)
            self.size = dist.get_world_size(group)
            self.group = group
            self.method = Fp4Method()
            self.other = MixedMethod()

        def forward(self, x):
            return self.method.apply(self, split_last(x, self.size)[self.rank])

        def forward_mixed(self, x):
            return self.other.apply(self, mixed(x, self.size)[self.rank])

        def sync(self, x):
            return agree(x, self.group)
"""


def test_a_piece_handed_on_to_a_method(tmp_path):
    """No condition of the layer's own reads the piece: it is handed to a
    method whose type test does (the parameter's own structure is what the
    call passes: the piece's size, never its kind)."""
    layer = textwrap.dedent(HANDED)
    flagged = _layer_lines_flagged(tmp_path, {"pkg/__init__.py": "", "pkg/pieces.py": textwrap.dedent(PIECES),
                                              "pkg/layer.py": layer})
    assert flagged == _marked(layer, "INVALID")


REEXPORTED = """
    import torch.distributed as dist

    from pkg.comm import agree, split_last


    class RowLayer:
        def __init__(self, group):
            self.rank = dist.get_rank(group)
            self.size = dist.get_world_size(group)
            self.group = group

        def forward(self, x):
            mine = split_last(x, self.size)[self.rank].contiguous()
            if isinstance(mine, tuple):
                return mine
            dist.all_reduce(mine, group=self.group)          # VALID: a tensor on every rank
            return agree(mine, self.group)
"""


def test_a_helper_re_exported_by_a_star_import(tmp_path):
    """The layer imports the helper from a package whose ``__init__.py``
    re-exports its module with ``from .utils import *`` (the module is
    analysed: the layer calls its all-reduce helper too): the one function
    of that name under the package is the one called
    (``Resolver.function_under_package``)."""
    utils = textwrap.dedent(PIECES) + textwrap.dedent("""

        def agree(tensor, group):
            torch.distributed.all_reduce(tensor, group=group)
            return tensor
    """)
    layer = textwrap.dedent(REEXPORTED)
    flagged = _layer_lines_flagged(tmp_path, {"pkg/__init__.py": "",
                                              "pkg/comm/__init__.py": "from pkg.comm.utils import *  # noqa\n",
                                              "pkg/comm/utils.py": utils, "pkg/layer.py": layer})
    assert flagged == []
    assert _marked(layer, "VALID")
