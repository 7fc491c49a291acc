"""An element a rank-local index picks from a list or tuple written out as
one value repeated is that value on every rank (issue 14: a two-rank
exchange handed ``[x.shape[1], x.shape[1]]`` reads ``lens[1 - rank]``).

Typed facts, no marks in strings: a display of one value repeated is
``positions.repeats_one_value``; a call records which arguments are such
displays (``CallResult.alike_displays``); a function that picks from a
parameter it holds in place by a rank-local index marks the index's sources
with the parameter (``Source.picks_from``), and the whole-tree pass drops
them from what a call returns where that call passes such a display there,
else keeps them unmarked.  Each VALID shape sits beside an INVALID one that
must still be reported."""

from __future__ import annotations

import textwrap

from cslint.api import check_paths

SOURCE = """
    import torch.distributed as dist


    def _pair_swap(t, sizes):
        me = dist.get_rank() % 2
        other = sizes[1 - me]
        if other == 0:
            return None
        return t


    def _pair_mine(t, sizes):
        if sizes[dist.get_rank()] > 16:
            return None
        return t


    def _pair_swap_after_write(t, sizes):
        me = dist.get_rank() % 2
        sizes[me] = 0
        if sizes[1 - me] == 0:
            return None
        return t


    def even_exchange(t):
        quick = _pair_swap(t, [t.shape[0], t.shape[0]])
        if quick is not None:
            return quick
        dist.all_reduce(t)  # VALID: both elements are one expression


    def even_tuple(t, width):
        quick = _pair_swap(t, (width, width))
        if quick is not None:
            return quick
        dist.all_reduce(t)  # VALID: a tuple of one name twice


    def even_keyword(t, width):
        quick = _pair_mine(t, sizes=[width, width, width])
        if quick is not None:
            return quick
        dist.all_reduce(t)  # VALID: passed by keyword


    def uneven_exchange(t, width):
        quick = _pair_swap(t, [t.shape[0], width])
        if quick is not None:
            return quick
        dist.all_reduce(t)  # INVALID: the elements differ


    def own_rank_twice(t):
        mine = dist.get_rank()
        quick = _pair_swap(t, [mine, mine])
        if quick is not None:
            return quick
        dist.all_reduce(t)  # INVALID: the element itself is this rank's


    def forwarded_list(t, sizes):
        quick = _pair_mine(t, sizes)
        if quick is not None:
            return quick
        dist.all_reduce(t)  # INVALID: whatever the caller's list holds


    def written_before_pick(t):
        quick = _pair_swap_after_write(t, [t.shape[0], t.shape[0]])
        if quick is not None:
            return quick
        dist.all_reduce(t)  # INVALID: the callee writes into the list first


    class _Swapper:
        def __init__(self):
            self.last = 0

        def swap_keeping(self, t, sizes):
            me = dist.get_rank() % 2
            before = self.last
            self.last = sizes[1 - me]
            if before == 0:
                return None
            return t


        def swap_only(self, t, sizes):
            if sizes[1 - dist.get_rank() % 2] == 0:
                return None
            return t


    def even_method(t, width, swapper: _Swapper):
        quick = swapper.swap_only(t, [width, width])
        if quick is not None:
            return quick
        dist.all_reduce(t)  # VALID: a method handed the display by position


    def uneven_method(t, width, swapper: _Swapper):
        quick = swapper.swap_only(t, [width, 1])
        if quick is not None:
            return quick
        dist.all_reduce(t)  # INVALID: the elements differ


    def uneven_then_even(t, width, swapper: _Swapper):
        swapper.swap_keeping(t, [width, t.shape[0]])
        quick = swapper.swap_keeping(t, [width, width])
        if quick is not None:
            return quick
        dist.all_reduce(t)  # INVALID: the pick it returns is the one an earlier call stored


    def inline_even(t):
        if [t.shape[1], t.shape[1]][dist.get_rank()] > 4:
            return
        dist.all_reduce(t)  # VALID: one expression twice


    def inline_uneven(t):
        if [t.shape[1], 3][dist.get_rank()] > 4:
            return
        dist.all_reduce(t)  # INVALID: the elements differ


    def inline_rank_twice(t):
        r = dist.get_rank()
        if [r, r][r % 2] > 4:
            return
        dist.all_reduce(t)  # INVALID: the element itself is this rank's


    def inline_slice(t):
        if len([t.shape[1], t.shape[1]][dist.get_rank():]) > 1:
            return
        dist.all_reduce(t)  # INVALID: a slice's length follows the rank


    def inline_draws(t, it):
        if [next(it), next(it)][dist.get_rank()] > 4:
            return
        dist.all_reduce(t)  # INVALID: each call gives its own element
"""


def _marked(source: str, word: str) -> list:
    return sorted(i for i, line in enumerate(source.splitlines(), 1) if f"# {word}:" in line)


def test_a_pick_from_a_display_of_one_value_is_that_value(tmp_path):
    source = textwrap.dedent(SOURCE)
    (tmp_path / "pairs.py").write_text(source)
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    flagged = sorted({f.line for f in findings if f.code == "CSL102"})
    assert _marked(source, "VALID")
    assert flagged == _marked(source, "INVALID")
