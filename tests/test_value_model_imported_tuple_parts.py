"""Each element of a tuple a function of another module of the project
returns (issue 14 §2.1): ``span, rank = ring_ctx()``, where every
``return`` of ``ring_ctx`` writes out a pair, binds ``span`` to what
the first elements hold (a group's size, alike on its ranks) and ``rank``
to the second (this rank); a callee whose returns do not all write out one
tuple shape still hands its whole result to every name.  A ``return`` of a
conditional expression each arm of which writes out a tuple of that length
(``(1, 0) if not ready else (size, rank)``) is one such tuple, each element
chosen between the arms' elements at its position."""

import textwrap

from cslint.api import check_paths


PARALLEL = """
    import torch.distributed as dist


    def initialized():
        return dist.is_initialized()


    def ring_ctx():
        if not initialized():
            return 1, 0
        return dist.get_world_size(), dist.get_rank()


    def loose_ctx():
        if not initialized():
            return [1, 0]
        return dist.get_world_size(), dist.get_rank()


    def chosen_ctx():
        return (1, 0) if not initialized() else (dist.get_world_size(), dist.get_rank())


    def uneven_ctx():
        return (1, 0) if not initialized() else (dist.get_world_size(), dist.get_rank(), 0)


    def settle(t):
        dist.barrier()
        return t
"""

USER = """
    import torch
    import torch.distributed as dist

    from pkg.parallel import chosen_ctx, loose_ctx, ring_ctx, uneven_ctx


    def step(t):
        span, rank = ring_ctx()
        if span > 1:
            dist.all_reduce(t)      # 11: the size, alike on every rank
        if rank == 0:
            dist.all_reduce(t)      # 13: this rank
        width, _ = loose_ctx()
        if width > 1:
            dist.all_reduce(t)      # 16: one return is a list: the whole result
        size, own = chosen_ctx()
        if size > 1:
            dist.all_reduce(t)      # 19: a pair either way: the sizes, alike on every rank
        if own == 0:
            dist.all_reduce(t)      # 21: this rank
        count, _ = uneven_ctx()
        if count > 1:
            dist.all_reduce(t)      # 24: tuples of two lengths: the whole result
"""


def _lines(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "parallel.py").write_text(textwrap.dedent(PARALLEL))
    (package / "user.py").write_text(textwrap.dedent(USER))
    result = check_paths([str(tmp_path)], report="per-site")
    return sorted(f.line for f in result.findings if f.path.endswith("user.py"))


def test_an_imported_function_s_tuple_is_read_element_by_element(tmp_path):
    lines = _lines(tmp_path)
    assert 11 not in lines
    assert 13 in lines


def test_an_imported_function_returning_other_shapes_hands_back_its_whole_result(tmp_path):
    assert 16 in _lines(tmp_path)


def test_a_tuple_chosen_by_a_test_is_read_element_by_element(tmp_path):
    lines = _lines(tmp_path)
    assert 19 not in lines
    assert 21 in lines
    assert 24 in lines
