"""A type test reads a value's kind, one part of its structure.  The data a
rank hands to a gather of per-process results (its share of a batch, of a
list of prompts) differs between ranks in its values and its size, never in
its kind: every rank runs the same code on the same kind of data.  So
``isinstance(share, torch.Tensor)`` is the same on every rank, while
``len(share)`` and ``share is None`` are not, and a type test of a value a
rank test picked still differs.  Each shape is paired with the read that
must still be reported."""

import textwrap

from cslint.api import check_source


def _codes(source, **kw):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source), **kw).findings]


# -- this rank's slice of the inputs, padded by a gather --------------------------------

_SPLIT = """
    import torch
    from accelerate.utils import pad_across_processes

    def split_values(inputs, start, end):
        if isinstance(inputs, (list, tuple, torch.Tensor)):
            result = inputs[start:end]
            {test}
                result = pad_across_processes(result, pad_index=inputs[-1])
            return result
        if isinstance(inputs, dict):
            inputs["input_ids"] = split_values(inputs["input_ids"], start, end)
            return inputs
        return inputs
"""


def test_type_of_this_ranks_slice_is_alike():
    assert _codes(_SPLIT.replace("{test}", "if isinstance(result, torch.Tensor):")) == []


def test_a_kind_test_kept_in_a_name_is_alike():
    source = _SPLIT.replace("{test}", "is_tensor = isinstance(result, torch.Tensor)\n            if is_tensor:")
    assert _codes(source) == []


def test_the_size_of_this_ranks_slice_still_differs():
    assert _codes(_SPLIT.replace("{test}", "if len(result) > 0:")) == [("CSL101", 9)]


def test_whether_this_ranks_share_is_there_still_differs():
    # whether this rank's slice holds a first element: None where it is empty
    assert _codes(_SPLIT.replace("{test}", "if next(iter(result), None) is not None:")) == [("CSL101", 9)]


def test_a_slice_reaching_a_none_test_is_never_none():
    # ``result`` is also rebound to the padded result, after the test: the
    # binding that reaches the test is the slice, which is never None
    assert _codes(_SPLIT.replace("{test}", "if result is not None:")) == []


def test_dispatch_on_the_kind_of_the_inputs_is_alike():
    # the recursive call reaches the gather; which arm runs is the inputs' kind
    assert _codes(_SPLIT.replace("{test}", "if True:")) == []


# -- a kind a rank chose ------------------------------------------------------------------


def test_the_kind_of_a_value_a_rank_test_chose_still_differs():
    assert _codes("""
        import torch.distributed as dist

        def pick(t):
            rank = dist.get_rank()
            x = [] if rank == 0 else None
            if isinstance(x, list):
                dist.all_reduce(t)
    """) == [("CSL101", 8)]


def test_a_kind_test_that_decides_a_structure_counts_whole():
    # a count of the arguments of one kind, read as a loop's length: the test
    # turned into structure keeps what the test read (here a rank's choice)
    assert _codes("""
        import torch.distributed as dist

        def count(t, items):
            if dist.get_rank() == 0:
                items = items + [t]
            n = 0
            for item in items:
                if callable(item):
                    n += 1
            for _ in range(n):
                dist.all_reduce(t)
    """) == [("CSL103", 12)]


# -- a length made from a rank ------------------------------------------------------------

_SLICED = """
    import torch.distributed as dist

    def first_shard(xs, t):
        rank = dist.get_rank()
        part = xs[:rank]
        {test}
            dist.all_reduce(t)
"""


def test_a_slice_between_rank_offsets_is_of_one_kind():
    assert _codes(_SLICED.replace("{test}", "if isinstance(part, list):")) == []


def test_the_length_of_that_slice_still_differs():
    assert _codes(_SLICED.replace("{test}", "if len(part) > 1:")) == [("CSL101", 8)]


def test_whether_that_slice_is_empty_still_differs():
    assert _codes(_SLICED.replace("{test}", "if part:")) == [("CSL101", 8)]


def test_a_length_returned_and_stored_stays_a_length():
    # the slice goes through a function's result and a dict before the type test
    assert _codes("""
        import torch.distributed as dist

        def head(xs, n):
            return xs[:n]

        def reduce_kind(batch, t):
            held = {"part": head(batch, dist.get_rank())}
            if isinstance(held["part"], tuple):
                dist.all_reduce(t)
    """) == []
