"""The batch-presence agreement of issue 14's largest real-tree cluster
(SGLang's scheduler loops: ``if batch: self.run_batch(batch)`` after the
MLP-sync gather), pinned before it is modelled: the one shape whose quiet
reading is sound is a strict xfail, and the shapes next to it that a naive
reading would quiet stay reported.

A step gathers over a group how much work each rank holds and, where some
rank holds any, gives every rank that holds none an idle batch.  After it,
whether a rank holds a batch is the same on every rank of the group only
where the count a rank gathers is zero exactly when it holds no batch:

- a batch whose count is zero although it is there (SGLang's prebuilt and
  idle batches count no tokens, dp_attn.py ``prepare_mlp_sync_batch_raw``)
  is kept as it is where no rank counts a token, beside ranks holding none;
- a rank that skips the gather, or leaves before it, or ORs a flag of its
  own into the test afterwards, decides alone;
- a gather over a smaller group than the collective's agrees nothing with
  the ranks outside it.

So a model of the fill (session 55, mlp55) needs a fact the analysis does
not have: that the gathered count is positive wherever the batch is there.
SGLang's counts are a batch's token counts (``extend_num_tokens``,
``batch_size()``), positive only by invariants of the scheduler that no
syntax shows, and zero for its prebuilt batches: the real-tree findings stay
until such a fact exists."""

import textwrap

import pytest

from cslint.api import check_source

_HELPERS = """
    import torch
    import torch.distributed as dist


    def load_batch(path):
        try:
            with open(path) as handle:
                return handle.read().split()
        except OSError:
            return None


    def agree_presence(local, group):
        # one where this rank holds a batch, zero where it holds none
        count = torch.tensor(0 if local is None else 1)
        dist.all_reduce(count, op=dist.ReduceOp.MAX, group=group)
        if count.item() > 0 and local is None:
            local = []
        return local


    def agree_tokens(local, group):
        # an empty batch counts zero and is kept as it is
        count = torch.tensor(0 if local is None or not local else len(local))
        dist.all_reduce(count, op=dist.ReduceOp.MAX, group=group)
        if count.item() > 0 and local is None:
            local = []
        return local


    def run(batch, group):
        dist.all_reduce(torch.tensor(len(batch)), group=group)
"""


def _reported(body):
    """Whether the line marked ``# HERE`` in ``body`` is reported."""
    source = textwrap.dedent(_HELPERS) + textwrap.dedent(body)
    marked = [i + 1 for i, text in enumerate(source.splitlines()) if text.endswith("# HERE")]
    assert len(marked) == 1
    found = {f.line for f in check_source(source, report="per-site").findings}
    return marked[0] in found, sorted(found)


@pytest.mark.xfail(strict=True, reason="the fill after a MAX-gathered presence count (zero exactly where no batch is "
                                       "there) makes every rank of the group hold a batch or none; not modelled")
def test_a_batch_filled_after_an_agreed_presence_count_is_there_alike():
    reported, found = _reported("""
        def loop(path, group):
            batch = agree_presence(load_batch(path), group)
            if batch is not None:
                run(batch, group)  # HERE
    """)
    assert not reported, found


def test_a_batch_that_counts_zero_is_kept_beside_ranks_holding_none():
    reported, found = _reported("""
        def loop(path, group):
            batch = agree_tokens(load_batch(path), group)
            if batch is not None:
                run(batch, group)  # HERE
    """)
    assert reported, found


def test_a_rank_that_skips_the_gather_decides_alone():
    reported, found = _reported("""
        def loop(path, group, other):
            batch = load_batch(path)
            if load_batch(other) is not None:
                batch = agree_presence(batch, group)
            if batch is not None:
                run(batch, group)  # HERE
    """)
    assert reported, found


def test_a_rank_that_leaves_before_the_gather_parts_the_ranks():
    reported, found = _reported("""
        def loop(path, group):
            batch = load_batch(path)
            if batch is None:
                return
            batch = agree_presence(batch, group)  # HERE
            if batch is not None:
                run(batch, group)
    """)
    assert reported, found


def test_a_flag_of_the_rank_ored_in_after_the_gather_decides_alone():
    reported, found = _reported("""
        def loop(path, group, other):
            batch = agree_presence(load_batch(path), group)
            pending = load_batch(other) is not None
            if batch is not None or pending:
                run(batch or [], group)  # HERE
    """)
    assert reported, found


def test_a_gather_over_a_smaller_group_agrees_nothing_outside_it():
    reported, found = _reported("""
        def loop(path, group, pair):
            batch = agree_presence(load_batch(path), pair)
            if batch is not None:
                run(batch, group)  # HERE
    """)
    assert reported, found
