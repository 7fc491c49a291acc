"""What a function returns keeps its own structure apart from its elements'.
A function that fills a list by ``append`` and hands it back returns a list
of one length on every rank, whatever each rank's elements are (a rank's own
entry picked by ``t if member == rank else h``): a caller testing whether the
result is None, how long it is or looping over it reads that own structure
(``Variant.return_own``, ``callrefs.OWN_PART``), while a read of an element
still sees the elements.  Each shape is paired with the reads that must still
be reported: a store on some ranks only, a rank-local early return, the list
bound anew by a rank test, an element read."""

import textwrap

from cslint.api import check_source


def _codes(source, **kw):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source), **kw).findings]


_CALLER = """
    import torch.distributed as dist

    def mine(group, handles, t):
        rank = dist.get_rank(group)
        out = []
        {fill}
        return out

    def step(group, handles, t):
        bufs = mine(group, handles, t)
        {test}
            dist.barrier(group=group)
"""

_PICKED = """for member, h in enumerate(handles):
            out.append(t if member == rank else h)"""


def _step(fill=_PICKED, test="if bufs is None:"):
    return _CALLER.replace("{fill}", fill).replace("{test}", test)


# -- valid: the returned list's own structure is alike ----------------------------------


def test_none_test_of_a_returned_list_of_rank_picked_elements_is_alike():
    assert _codes(_step()) == []


def test_length_of_a_returned_list_of_rank_picked_elements_is_alike():
    assert _codes(_step(test="if len(bufs) != len(handles):")) == []


def test_loop_over_a_returned_list_of_rank_picked_elements_runs_alike():
    assert _codes(_step(test="for b in bufs:")) == []


def test_the_call_read_directly_is_alike():
    source = _step(test="if mine(group, handles, t) is None:").replace(
        "bufs = mine(group, handles, t)", "pass")
    assert _codes(source) == []


def test_a_rank_picked_element_bound_first_is_alike():
    fill = """for member, h in enumerate(handles):
            x = t if member == rank else h
            out.append(x)"""
    assert _codes(_step(fill=fill)) == []


def test_a_returned_comprehension_of_rank_picked_elements_is_alike():
    source = """
        import torch.distributed as dist

        def mine(group, handles, t):
            rank = dist.get_rank(group)
            return [t if member == rank else h for member, h in enumerate(handles)]

        def step(group, handles, t):
            bufs = mine(group, handles, t)
            if bufs is None:
                dist.barrier(group=group)
    """
    assert _codes(source) == []


def test_a_returned_list_filled_after_a_collective_is_alike():
    # the callee issues a collective itself (the CFG dataflow walks it)
    source = """
        import torch.distributed as dist

        def share(group, t):
            handles = [None] * dist.get_world_size(group)
            dist.all_gather_object(handles, t, group=group)
            out = []
            for member, h in enumerate(handles):
                if member == dist.get_rank(group):
                    out.append(t)
                    continue
                out.append(h)
            return out

        def step(group, t):
            bufs = share(group, t)
            if bufs is None:
                dist.barrier(group=group)
    """
    assert _codes(source) == []


# -- invalid: what still differs --------------------------------------------------------


def test_a_store_on_some_ranks_still_changes_the_returned_length():
    fill = """if rank == 0:
            out.append(t)"""
    assert _codes(_step(fill=fill, test="if len(bufs) == 0:")) == [("CSL101", 14)]


def test_a_rank_local_early_return_still_differs():
    fill = """if rank == 0:
            return None"""
    assert _codes(_step(fill=fill)) == [("CSL101", 14)]


def test_the_list_bound_anew_by_a_rank_test_still_differs():
    fill = """for member, h in enumerate(handles):
            out.append(h)
        if rank == 0:
            out = None"""
    assert _codes(_step(fill=fill)) == [("CSL101", 16)]


def test_an_element_of_the_returned_list_still_differs():
    assert _codes(_step(test="if bufs[0] is None:")) == [("CSL101", 14)]


def test_a_returned_comprehension_filtered_by_rank_still_differs():
    source = """
        import torch.distributed as dist

        def mine(group, handles):
            rank = dist.get_rank(group)
            return [h for member, h in enumerate(handles) if member != rank or rank == 0]

        def step(group, handles):
            bufs = mine(group, handles)
            if len(bufs) == 1:
                dist.barrier(group=group)
    """
    assert _codes(source) == [("CSL101", 11)]


# -- a test each path of which stores one element alike (stores.py) ------------------------

_ARMS = """
    import torch.distributed as dist

    def fill(group, handles, t):
        out = []
        other = []
        for member, h in enumerate(handles):
            {arms}
        if len(out) != len(handles):
            dist.barrier(group=group)
"""


def _arms(arms):
    return _ARMS.replace("{arms}", textwrap.indent(textwrap.dedent(arms), " " * 12).strip())


def _barrier(source):
    """The line of the barrier in ``source`` (as check_source numbers it)."""
    return next(i for i, line in enumerate(textwrap.dedent(source).splitlines(), 1) if "dist.barrier" in line)


def _reported(arms):
    source = _arms(arms)
    return _codes(source) == [("CSL101", _barrier(source))]


def test_if_else_arms_each_appending_once_keep_the_length():
    assert _codes(_arms("""
        if member == dist.get_rank(group):
            out.append(t)
        else:
            out.append(h)
    """)) == []


def test_a_continue_arm_and_the_rest_of_the_body_appending_once_keep_the_length():
    assert _codes(_arms("""
        if member == dist.get_rank(group):
            out.append(t)
            continue
        out.append(h)
    """)) == []


def test_an_arm_appending_twice_still_changes_the_length():
    assert _reported("""
        if member == dist.get_rank(group):
            out.append(t)
            out.append(t)
        else:
            out.append(h)
    """)


def test_a_continue_arm_with_nothing_after_it_still_changes_the_length():
    assert _reported("""
        if member == dist.get_rank(group):
            continue
        out.append(h)
    """)


def test_an_arm_that_breaks_still_changes_the_length():
    assert _reported("""
        if member == dist.get_rank(group):
            out.append(t)
            break
        out.append(h)
    """)


def test_a_rank_test_after_an_alike_one_still_changes_the_length():
    assert _reported("""
        if member == dist.get_rank(group):
            out.append(t)
            continue
        out.append(h)
        if dist.get_rank(group) == 0:
            out.append(h)
    """)


def test_arms_appending_to_different_containers_still_change_the_length():
    assert _reported("""
        if member == dist.get_rank(group):
            out.append(t)
        else:
            other.append(h)
    """)


def test_alike_arms_in_a_function_without_collectives_keep_the_returned_length():
    source = """
        import torch.distributed as dist

        def mine(group, handles, t):
            out = []
            for member, h in enumerate(handles):
                if member == dist.get_rank(group):
                    out.append(t)
                    continue
                out.append(h)
            return out

        def step(group, handles, t):
            if len(mine(group, handles, t)) != len(handles):
                dist.barrier(group=group)
    """
    assert _codes(source) == []


def test_a_rank_skip_in_a_function_without_collectives_still_changes_the_returned_length():
    source = """
        import torch.distributed as dist

        def mine(group, handles, t):
            out = []
            for member, h in enumerate(handles):
                if member == dist.get_rank(group):
                    continue
                out.append(h)
            return out

        def step(group, handles, t):
            if len(mine(group, handles, t)) != len(handles):
                dist.barrier(group=group)
    """
    assert _codes(source) == [("CSL101", 14)]


# -- one piece per size, a zip as long as its shortest argument ----------------------------

_SPLIT = """
    import torch
    import torch.distributed as dist

    def gather_uneven(sp, group, per_rank):
        out = [torch.empty(w) for w in per_rank]
        dist.all_gather(out, sp, group=group)
        return torch.cat(out)

    def gather_logical(tensor, group, widths):
        tp_index = dist.get_rank(group=group)
        {sizes}
        sub_params = {split}
        return [gather_uneven(sp, group, per_rank) for sp, per_rank in zip(sub_params, widths)]
"""


def _split(sizes="local_sizes = [per_rank[tp_index] for per_rank in widths]",
           split="torch.split(tensor, local_sizes, dim=0)"):
    return _SPLIT.replace("{sizes}", sizes).replace("{split}", split)


def test_a_split_by_a_list_of_rank_picked_sizes_gives_one_piece_per_size():
    assert _codes(_split()) == []


def test_a_method_split_by_a_list_of_rank_picked_sizes_gives_one_piece_per_size():
    assert _codes(_split(split="tensor.split(local_sizes, 0)")) == []


def test_a_split_by_a_rank_size_still_differs_in_pieces():
    source = _split(sizes="local_sizes = widths[0][tp_index]")
    assert _codes(source) == [("CSL103", _barrier(source.replace("return [", "dist.barrier; return [")))]


def test_a_list_of_sizes_filtered_by_rank_still_differs_in_pieces():
    source = _split(sizes="local_sizes = [w[tp_index] for w in widths if w[tp_index] > 0]")
    assert _codes(source) == [("CSL103", _barrier(source.replace("return [", "dist.barrier; return [")))]


def test_a_zip_with_a_rank_length_argument_still_differs():
    source = _split(split="tensor.split(local_sizes, 0)").replace(
        "zip(sub_params, widths)", "zip(sub_params, widths[:tp_index])")
    assert _codes(source) == [("CSL103", _barrier(source.replace("return [", "dist.barrier; return [")))]
