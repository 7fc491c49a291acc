"""Past the nesting limit, a method called on an object a call of the tree
made keeps that call bound to its arguments (``results.AtomBuilder.call``,
``receiver``; issue 14).

A helper of another module hands back a workspace the group built together
(``get_workspace(world_size, rank, tokens, hidden, group)``, a collective
library factory inside), and the caller asks the workspace a question no
method of the tree answers (``workspace.fits(...)``).  The question's atom
nests past the limit (the token budget is itself a call of calls), so its
fallback, the receiver beside the arguments, was flattened: the helper's
call became its own result plus everything it was given, and the rank and
the group handed to the helper read as what the workspace is.  Bound, the
whole-tree pass reads of them only what the helper returns: a workspace
agreed over the group.  A helper that does hand back what the rank made
(``get_buffer``: a library call that is no collective, given the rank) is
still found.
"""

import textwrap

from cslint.api import check_paths

WORKSPACE = """
    try:
        import flashinfer.comm as fi_comm
    except ImportError:
        fi_comm = None

    _workspace = None
    _failed = False


    def _create(world_size, rank, tokens, hidden, group):
        try:
            workspace = fi_comm.create_allreduce_fusion_workspace(
                world_size=world_size, rank=rank, max_token_num=tokens, hidden_dim=hidden, group=group,
            )
        except Exception:
            return None
        return workspace


    def get_workspace(world_size, rank, tokens, hidden, group):
        global _workspace, _failed
        if _workspace is not None or _failed:
            return _workspace
        _workspace = _create(world_size, rank, tokens, hidden, group)
        if _workspace is None:
            _failed = True
        return _workspace


    def get_buffer(world_size, rank, tokens, hidden, group):
        return fi_comm.make_buffer(world_size=world_size, rank=rank, max_token_num=tokens, hidden_dim=hidden)
"""

FUSED = """
    import torch
    import torch.distributed as dist

    from pkg.workspace import get_buffer, get_workspace

    _BUDGETS = {2: 64, 4: 32}


    class Coordinator:
        def __init__(self, ranks, backend):
            self.cpu_group = dist.new_group(ranks, backend=backend)


    _TP = None


    def get_tp():
        return _TP


    def budget(tp_size, hidden, dtype):
        size = _BUDGETS.get(tp_size)
        if not size:
            return None
        return size * 1024 // (hidden * torch.tensor([], dtype=dtype).element_size())


    def can_fuse(x, tp_size):
        if not x.is_cuda or x.dim() != 2 or not x.is_contiguous():
            return False
        tokens, hidden = x.shape
        limit = budget(tp_size, hidden, x.dtype)
        if limit is None or tokens > limit:
            return False
        workspace = get_workspace(tp_size, dist.get_rank(), limit, hidden, get_tp().cpu_group)
        if workspace is None:
            return False
        if not workspace.fits(tp_size=tp_size, tokens=tokens, hidden=hidden):
            return False
        return True


    def can_fuse_local(x, tp_size):
        if not x.is_cuda or x.dim() != 2 or not x.is_contiguous():
            return False
        tokens, hidden = x.shape
        limit = budget(tp_size, hidden, x.dtype)
        if limit is None or tokens > limit:
            return False
        buffer = get_buffer(tp_size, dist.get_rank(), limit, hidden, get_tp().cpu_group)
        if buffer is None:
            return False
        if not buffer.fits(tp_size=tp_size, tokens=tokens, hidden=hidden):
            return False
        return True


    def fused_norm(x, tp_size):
        if can_fuse(x, tp_size):
            return x
        dist.all_reduce(x, group=get_tp().cpu_group)          # VALID: the workspace the group made answers alike
        return x


    def local_norm(x, tp_size):
        if can_fuse_local(x, tp_size):
            return x
        dist.all_reduce(x, group=get_tp().cpu_group)          # INVALID: a buffer made from this rank's rank
        return x
"""


def _marked(source, word):
    return sorted(i for i, line in enumerate(source.splitlines(), 1) if line.rstrip().endswith(word)
                  or f"# {word}:" in line)


def test_a_method_of_the_groups_workspace_reads_what_the_helper_returns(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "workspace.py").write_text(textwrap.dedent(WORKSPACE))
    fused = textwrap.dedent(FUSED)
    (package / "fused.py").write_text(fused)
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    flagged = sorted({f.line for f in findings if f.path.endswith("fused.py")})
    assert flagged == _marked(fused, "INVALID")
    assert _marked(fused, "VALID")
    assert not [f for f in findings if f.path.endswith("workspace.py")]
