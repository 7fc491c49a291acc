"""The decode-context-parallel group (``get_dcp_group()``) is not the
context-parallel dimension alone (issue 14): the frameworks that build one
cut it out of the TP ranks (consecutive TP ranks of one group; with
prefill context parallelism, TP x PCP ranks), so a value that differs
between TP ranks differs inside one DCP group, and a collective over it
reached under such a value is reported.  The prefill-context-parallel group
(``get_pcp_group()``) is the context-parallel dimension alone."""

import textwrap

from cslint.api import check_source
from cslint.presets import GROUP_SPANS, covering_group, group_from_text, group_span
from cslint.presets.rank_names import rank_name_dims


def _lines(source, **kw):
    return sorted(f.line for f in check_source(textwrap.dedent(source), report="per-site", **kw).findings)


def test_the_dcp_group_spans_the_tp_ranks_it_is_cut_from():
    assert "tp" in group_span(group_from_text("get_dcp_group()"))
    assert "tp" in rank_name_dims("dcp_rank")
    assert group_span(group_from_text("get_pcp_group()")) == frozenset({"cp"})


def test_a_dcp_group_covers_no_other_group():
    # some of the TP ranks: a local holding the TP group or the CP group is not over a DCP group
    assert covering_group({"tp", "cp"}, GROUP_SPANS) == "tp_cp"
    assert covering_group({"dcp"}, GROUP_SPANS) == "dcp"


def test_a_tp_rank_deciding_a_dcp_collective_is_reported():
    assert _lines("""
        import torch
        from vllm.distributed import get_dcp_group, get_tensor_model_parallel_rank

        def merge_partial_attention(out, lse):
            if get_tensor_model_parallel_rank() == 0:
                lse = get_dcp_group().all_gather(lse, dim=0)     # reported: TP ranks of one DCP group differ
            return out, lse
    """) == [7]


def test_a_value_agreed_over_the_dcp_group_deciding_its_collective_is_quiet():
    assert _lines("""
        import torch
        from vllm.distributed import get_dcp_group, get_tensor_model_parallel_rank

        def merge_partial_attention(out, lse):
            local = torch.tensor([float(get_tensor_model_parallel_rank())])
            longest = get_dcp_group().all_reduce(local)
            if longest.item() > 0:
                lse = get_dcp_group().all_gather(lse, dim=0)
            return out, lse
    """) == []
