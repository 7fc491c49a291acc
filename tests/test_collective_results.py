"""What a collective hands back (issue 14, uniform-after-collective-not-recognised):
a reduce-scatter over equal splits gives every rank of the group a part of the
same shape whose contents are its own, so a test of that part's structure (its
shape, whether the result is there) is the same on every rank, while a test of
its contents is not; a gather, or a reduce-scatter with per-rank sizes, hands
back results of different shapes."""

import textwrap

from cslint.api import check_source


def _lines(source, **kw):
    return sorted(f.line for f in check_source(textwrap.dedent(source), report="per-site", **kw).findings)


def test_a_reduce_scatter_part_has_one_shape_on_every_rank():
    assert _lines("""
        from vllm.distributed import (get_tp_group, tensor_model_parallel_all_reduce,
                                      tensor_model_parallel_gather, tensor_model_parallel_reduce_scatter)

        def shape_test(x):
            part = tensor_model_parallel_reduce_scatter(x, 0)
            if part.shape[0] > 16:
                part = tensor_model_parallel_all_reduce(part)
            return part

        def method_shape_test(x):
            part = get_tp_group().reduce_scatter(x, 0)
            if part is None or part.shape[0] == 0:
                return x
            return tensor_model_parallel_all_reduce(part)

        def contents_test(x):
            part = tensor_model_parallel_reduce_scatter(x, 0)
            if part.sum() > 0:                                    # reported: the contents are this rank's
                part = tensor_model_parallel_all_reduce(part)
            return part

        def gathered(x):
            out = tensor_model_parallel_gather(x, 0, 0)
            if out is not None:                                   # reported: only the destination has it
                out = tensor_model_parallel_all_reduce(out)
            return out

        def variable_sizes(x, sizes):
            part = get_tp_group().reduce_scatterv(x, 0, sizes)
            if part.shape[0] > 16:                                # reported: each rank's own size
                part = tensor_model_parallel_all_reduce(part)
            return part
    """) == [20, 26, 32]
