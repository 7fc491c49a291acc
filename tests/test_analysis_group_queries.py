"""What a query of a process group answers is the same on every rank of
that group (issue 14, object taint: a rank-dependent exit before a field is
set does not make what the group answers rank-local).

A communicator sets ``self.group`` only past an exit a rank takes on its own
(its device's peer access); a later loop over the group's members,
``dist.get_process_group_ranks(group=self.group)``, runs as many times on
every member, as a loop over ``range(dist.get_world_size(group=self.group))``
does.  A list cut at this rank's own rank, or one some other library call
makes from the group, still differs.  Each VALID shape sits beside the
INVALID one that must still be reported."""

import textwrap

from cslint.api import check_source

SOURCE = """
    import torch
    import torch.distributed as dist

    import peerlib


    def probe(group):
        rank = dist.get_rank(group=group)
        if not torch.cuda.can_device_access_peer(rank, 0):
            return None
        return True


    class Comm:
        def __init__(self, group):
            self.disabled = True
            if probe(group) is None:
                return
            self.group = group
            self.rank = dist.get_rank(group=group)
            self.disabled = False

        def gather_members(self, data):                            # VALID
            ranks = dist.get_process_group_ranks(group=self.group)
            ranks.sort()
            for i, rank in enumerate(ranks):
                dist.broadcast_object_list(data[i], src=rank, group=self.group)

        def gather_sorted(self, data):                             # VALID
            for i, rank in enumerate(sorted(dist.get_process_group_ranks(self.group))):
                dist.broadcast_object_list(data[i], src=rank, group=self.group)

        def gather_by_size(self, data):                            # VALID
            for i in range(dist.get_world_size(group=self.group)):
                dist.broadcast_object_list(data[i], src=i, group=self.group)

        def gather_lower(self, data):                              # INVALID
            ranks = dist.get_process_group_ranks(group=self.group)[: self.rank]
            for i, rank in enumerate(ranks):
                dist.broadcast_object_list(data[i], src=rank, group=self.group)

        def gather_peers(self, data):                              # INVALID
            for i, rank in enumerate(peerlib.reachable_peers(group=self.group)):
                dist.broadcast_object_list(data[i], src=rank, group=self.group)
"""


def _findings():
    source = textwrap.dedent(SOURCE)
    result = check_source(source, report="per-site")
    lines = source.splitlines()
    return {(lines[f.line - 1].strip(), f.code) for f in result.findings}


def test_a_loop_over_a_groups_members_runs_alike_on_every_member():
    found = _findings()
    assert all("data[i], src=rank" in text or "src=i" in text for text, _ in found), found
    functions = sorted(f.function for f in check_source(textwrap.dedent(SOURCE), report="per-site").findings)
    assert functions == ["Comm.gather_lower", "Comm.gather_peers"], functions
