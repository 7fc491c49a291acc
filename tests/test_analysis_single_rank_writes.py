"""What a method run only where a group has one rank writes into a field
differs along none of that group's dimensions (issue 14): where it runs, no
two ranks of those dimensions exist.  A sync record that keeps this rank's
own count where the data-parallel group has one rank (``finalize_local``,
called only in the arm of ``if num_dp_ranks == 1:``) and gathers every
rank's count otherwise holds, in either case, counts no two data-parallel
ranks tell apart, so a test of them before a collective over that group
decides alike (``Program.single_rank_dims``, read by ``Program._step_marked``).
The same method also called where the group may have several ranks, an arm
where another group (``tp``) has one rank, and a collective over a group
spanning more dimensions than the one-rank group keep their findings."""

import textwrap

from cslint.api import check_paths

_SYNC = """
    import torch
    import torch.distributed as dist


    class SyncInfo:
        def __init__(self, num_dp_ranks, num_tokens):
            self.num_dp_ranks = num_dp_ranks
            self.num_tokens = num_tokens
            self.global_num_tokens = None

        def finalize_local(self):
            self.global_num_tokens = [self.num_tokens]

        def all_gather(self, group):
            local = torch.tensor([self.num_tokens])
            out = torch.empty(self.num_dp_ranks, dtype=torch.int64)
            dist.all_gather_into_tensor(out, local, group=group)
            self.global_num_tokens = out.tolist()


    def sync(num_dp_ranks, dp_rank, dp_group):
        info = SyncInfo(num_dp_ranks, dp_rank % 3)
        if num_dp_ranks == 1:
            info.finalize_local()
        else:
            info.all_gather(dp_group)
        if max(info.global_num_tokens) > 0:
            dist.all_reduce(torch.zeros(4), group=dp_group)
"""

_FINDING = 29  # the all_reduce under the test of the counts


def _lines(tmp_path, source: str) -> list:
    path = tmp_path / "sync.py"
    path.write_text(textwrap.dedent(source))
    return sorted(f.line for f in check_paths([str(path)], report="per-site").findings)


def test_a_field_written_only_where_the_group_has_one_rank_keeps_no_rank_of_it_apart(tmp_path):
    assert _lines(tmp_path, _SYNC) == []


def test_the_same_method_also_called_where_the_group_may_have_several_ranks_keeps_the_finding(tmp_path):
    source = _SYNC + """

    def warm_up(num_dp_ranks, dp_rank):
        info = SyncInfo(num_dp_ranks, dp_rank)
        info.finalize_local()
        return info
"""
    assert _lines(tmp_path, source) == [_FINDING]


def test_an_arm_where_another_group_has_one_rank_keeps_the_finding(tmp_path):
    source = _SYNC.replace("if num_dp_ranks == 1:", "if num_tp_ranks == 1:").replace(
        "def sync(num_dp_ranks,", "def sync(num_tp_ranks, num_dp_ranks,")
    assert _lines(tmp_path, source) == [_FINDING]


def test_a_collective_over_a_group_spanning_more_dimensions_keeps_the_finding(tmp_path):
    # the count is this rank's own id: it differs along every dimension, and
    # a data-parallel group of one rank leaves the others apart
    source = _SYNC.replace("info = SyncInfo(num_dp_ranks, dp_rank % 3)",
                           "info = SyncInfo(num_dp_ranks, dist.get_rank() % 3)").replace(
        "info.all_gather(dp_group)", "info.all_gather(None)").replace("group=dp_group)", "group=None)")
    assert _lines(tmp_path, source) == [_FINDING]


def test_an_arm_where_a_size_named_count_of_own_requests_is_one_keeps_the_finding(tmp_path):
    # ``dp_size`` holds this rank's own request count whatever it is called: the
    # ranks with one request each keep their own count, on any number of ranks
    source = _SYNC.replace("if num_dp_ranks == 1:", "if dp_size == 1:").replace(
        "info = SyncInfo(num_dp_ranks, dp_rank % 3)",
        "dp_size = len([r for r in reqs if r.owner == dp_rank])\n        info = SyncInfo(num_dp_ranks, dp_rank % 3)").replace(
        "def sync(num_dp_ranks,", "def sync(reqs, num_dp_ranks,")
    # (the gather, which only the ranks with other counts run, is reported too)
    assert _FINDING + 1 in _lines(tmp_path, source)
