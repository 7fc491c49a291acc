"""A count of one dimension's ranks is that group's size (issue 14):
``num_dp_ranks`` is read as ``dp_size`` is (``rank_names.size_name_is_uniform``),
so the arm of ``if num_dp_ranks == 1:`` runs only where the data-parallel group
has one rank, and what it keeps of this rank's own count, beside the counts the
other arm gathers, differs between no two ranks of the group.  A count of
something else (``num_dp_requests``) is no size, a count of a node's ranks
(``num_local_ranks``) names no group, and a test that holds with several ranks
(``num_dp_ranks == 2``) keeps its finding."""

import textwrap

from cslint.api import check_paths

_SYNC = """
    import torch
    import torch.distributed as dist


    def sync(num_dp_ranks, dp_rank, dp_group):
        count = dp_rank % 3
        if num_dp_ranks == 1:
            seen = [count]
        else:
            out = torch.empty(num_dp_ranks, dtype=torch.int64)
            dist.all_gather_into_tensor(out, torch.tensor([count]), group=dp_group)
            seen = out.tolist()
        if max(seen) > 0:
            dist.all_reduce(torch.zeros(4), group=dp_group)
"""


def _lines(tmp_path, source: str) -> list:
    path = tmp_path / "sync.py"
    path.write_text(textwrap.dedent(source))
    return sorted(f.line for f in check_paths([str(path)], report="per-site").findings)


def test_the_arm_of_a_single_rank_count_keeps_no_rank_apart(tmp_path):
    assert _lines(tmp_path, _SYNC) == []


def test_a_count_spelt_n_ranks_is_a_size_too(tmp_path):
    source = _SYNC.replace("num_dp_ranks", "n_dp_ranks")
    assert _lines(tmp_path, source) == []


def test_a_count_of_something_else_is_no_size(tmp_path):
    source = _SYNC.replace("num_dp_ranks", "num_dp_requests")
    assert _lines(tmp_path, source) == [15]


def test_a_count_of_a_nodes_ranks_is_no_group_size(tmp_path):
    source = _SYNC.replace("num_dp_ranks", "num_local_ranks")
    assert _lines(tmp_path, source) == [15]


def test_an_arm_taken_with_several_ranks_keeps_its_finding(tmp_path):
    source = _SYNC.replace("if num_dp_ranks == 1:", "if num_dp_ranks == 2:")
    assert _lines(tmp_path, source) == [15]
