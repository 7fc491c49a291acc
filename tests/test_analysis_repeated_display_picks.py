"""An element picked by a rank-local index from a list or tuple written out
as one expression several times is that expression's value on every rank
(issue 14, object-taint-spread / uniform-exception: SGLang's two-rank
exchange is handed ``[x.shape[1], x.shape[1]]`` by its equal-length callers
and reads ``seq_lens[1 - r]`` with ``r`` the pair rank).

A display of one expression repeated, a read with no call in it
(``positions.repeats_one_expression``), holds one value however often it is
written: ``[n, n][rank]`` is ``n``.  A function that picks from a parameter
holding its elements in place marks the rank-local sources of the index with
that parameter (``divergence.picking_mark``); a call passing such a display
there (``positions.ALIKE_ARG``) drops them from what the call returns, any
other call keeps them.  Each VALID shape sits beside an INVALID one that must
still be reported: differing elements, the caller's own list, elements that
are calls, a callee that stores into the list before it picks."""

from __future__ import annotations

import textwrap

from cslint.api import check_paths

SOURCE = """
    import torch.distributed as dist


    def _swap_lengths(x, lens):
        r = dist.get_rank()
        peer = lens[1 - r]
        if peer == 0:
            return None
        return x


    def _own_length(x, lens):
        mine = lens[dist.get_rank()]
        if mine > 4:
            return None
        return x


    def _swap_after_store(x, lens):
        r = dist.get_rank()
        lens[0] = r
        if lens[1 - r] == 0:
            return None
        return x


    def same_lengths(x):
        fast = _swap_lengths(x, [x.shape[1], x.shape[1]])
        if fast is not None:
            return fast
        dist.all_reduce(x)  # VALID: both elements are the same expression


    def halves(x):
        half = x.shape[1] // 2
        fast = _swap_lengths(x, (half, half))
        if fast is not None:
            return fast
        dist.all_reduce(x)  # VALID: a tuple of one name twice


    def by_keyword(x, n):
        fast = _own_length(x, lens=[n, n, n])
        if fast is not None:
            return fast
        dist.all_reduce(x)  # VALID: passed by keyword


    def other_lengths(x, n):
        fast = _swap_lengths(x, [x.shape[1], n])
        if fast is not None:
            return fast
        dist.all_reduce(x)  # INVALID: the elements differ


    def given_lengths(x, lens):
        fast = _own_length(x, lens)
        if fast is not None:
            return fast
        dist.all_reduce(x)  # INVALID: the caller's list, whatever it holds


    def stored_lengths(x):
        fast = _swap_after_store(x, [x.shape[1], x.shape[1]])
        if fast is not None:
            return fast
        dist.all_reduce(x)  # INVALID: the callee stores the rank into the list


    def local_display(x):
        if [x.shape[0], x.shape[0]][dist.get_rank()] > 4:
            return
        dist.all_reduce(x)  # VALID: a display of one expression twice


    def local_differing(x):
        if [x.shape[0], 3][dist.get_rank()] > 4:
            return
        dist.all_reduce(x)  # INVALID: the elements differ


    def local_calls(x, it):
        if [next(it), next(it)][dist.get_rank()] > 4:
            return
        dist.all_reduce(x)  # INVALID: each call gives its own element
"""


def _marked(source: str, word: str) -> list:
    return sorted(i for i, line in enumerate(source.splitlines(), 1) if f"# {word}:" in line)


def test_a_pick_from_one_expression_repeated_is_that_expression(tmp_path):
    source = textwrap.dedent(SOURCE)
    (tmp_path / "pairs.py").write_text(source)
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    flagged = sorted({f.line for f in findings if f.code == "CSL102"})
    assert _marked(source, "VALID")
    assert flagged == _marked(source, "INVALID")
