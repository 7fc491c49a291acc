"""Collectives over the same ranks by different spellings (issue 14): a
symmetric-memory collective told its group by name (``group.group_name``)
runs over that group object, and two group fields set together from groups
made over one rank list (a device group and a CPU group of the same ranks)
name one group (cslint/analysis/communicators.py ``same_rank_fields``,
cslint/analysis/collectivegroups.py ``named_group``, ``CollectiveSpec.group_by_name``).
One group is not one communicator: arms that reach the same operation over
it through two (a communicator built over the CPU group and the device
group; a symmetric-memory kernel and the group's own all-reduce) part the
ranks all the same (cslint/analysis/issuingroutes.py,
tests/test_analysis_issuing_routes.py)."""

import textwrap

from cslint.api import check_source


_COORDINATOR = """
    import torch
    import torch.distributed as dist


    class PairComm:
        def __init__(self, group, device):
            self.group = group
            self.disabled = False

        def all_reduce(self, tensor):
            dist.all_reduce(tensor, group=self.group)


    class Coordinator:
        def __init__(self, group_ranks, rank):
            self.rank = rank
            self.device_group = None
            self.cpu_group = None
            for ranks in group_ranks:
                device_group = dist.new_group(ranks, backend="nccl")
                cpu_group = dist.new_group(OTHER, backend="gloo")
                if self.rank in ranks:
                    self.ranks = ranks
                    self.device_group = device_group
                    self.cpu_group = cpu_group
            self.fast_comm = PairComm(group=self.cpu_group, device=rank)

        def all_reduce(self, tensor):
            fast_comm = self.fast_comm
            if fast_comm is not None and tensor.numel() > self.rank:
                fast_comm.all_reduce(tensor)
            else:
                dist.all_reduce(tensor, group=self.device_group)
"""


def _groups(source):
    return sorted((f.line, f.group) for f in check_source(textwrap.dedent(source), report="per-site").findings)


def test_a_device_group_and_a_cpu_group_of_one_rank_list_are_one_group():
    # Either arm all-reduces over the coordinator's ranks: one through a
    # communicator built over the CPU group, the other over the device group
    # made from the same list, so both name one group; through two
    # communicators, a rank taking the one never meets its peers in the other.
    assert _groups(_COORDINATOR.replace("OTHER", "ranks")) == [(32, "group:self.cpu_group"),
                                                               (34, "group:self.cpu_group")]


def test_groups_made_over_different_rank_lists_stay_apart():
    assert _groups(_COORDINATOR.replace("OTHER", "sorted(ranks)[::-1][:1]")) == [(32, "group:self.cpu_group"),
                                                                                 (34, "group:self.device_group")]


_SYMMETRIC = """
    import torch
    import torch.distributed as dist


    def reduce(buf, group, rank, use_multicast):
        if use_multicast and buf.numel() > rank:
            torch.ops.symm_mem.multimem_all_reduce_(buf, "sum", group.group_name)
        else:
            group.all_reduce(buf)
        return buf


    def scatter(buf, out, group, rank):
        if rank == 0:
            torch.ops.symm_mem.reduce_scatter_out(buf, group.group_name, True, out)
        return out
"""


def test_a_symmetric_memory_collective_runs_over_the_group_it_is_named_by():
    # The first function's arms all-reduce over `group` either way, one by
    # the symmetric-memory kernel, the other by the group's own backend: two
    # communicators, which part the ranks; the second reduce-scatters on rank
    # 0 alone.  Every one of them runs over `group`.
    assert _groups(_SYMMETRIC) == [(8, "group:group"), (10, "group:group"), (16, "group:group")]


def test_the_fix_facts_name_the_group_object_not_its_name():
    finding = next(f for f in check_source(textwrap.dedent(_SYMMETRIC), report="per-site").findings if f.line == 16)
    assert finding.group == "group:group" and finding.fix_facts.group_expr == "group"
