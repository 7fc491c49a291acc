"""An element of an object list a gather filled is agreed only at an index
every rank agrees on (issue 14).  A per-host leader index -- the first rank
in the gathered host names that shares this rank's host -- differs between
hosts, so the leader's entry read through it differs too, as this rank's own
entry does; a fixed index or the first rank's host gives every rank the same
entry.  (The realtree shape this pins down: a host-leader descriptor whose
size test is dead only because an earlier `any` over every gathered entry
already sent all ranks out together -- not because the index is agreed.)"""

import textwrap

from cslint.api import check_source

SHAPES = """
    import socket

    import torch


    def _gather(group, value):
        values = [None] * group.world_size
        torch.distributed.all_gather_object(values, value, group=group.cpu_group)
        return values


    def _host_leader(group):
        hosts = _gather(group, socket.gethostname())
        return hosts.index(hosts[group.rank_in_group])


    def _first_host_leader(group):
        hosts = _gather(group, socket.gethostname())
        return hosts.index(hosts[0])


    def per_host_leader(group, size):
        leader = _host_leader(group)
        mine = (leader, size) if group.rank_in_group == leader else None
        states = _gather(group, mine)
        state = states[leader]
        if state[1] <= 0:
            return 0
        _gather(group, None)      # reported: each host reads its own leader's entry
        return 1


    def first_host_leader(group, size):
        leader = _first_host_leader(group)
        mine = (leader, size) if group.rank_in_group == leader else None
        states = _gather(group, mine)
        state = states[leader]
        if state[1] <= 0:
            return 0
        _gather(group, None)      # every rank reads the same entry
        return 1


    def fixed_index(group, size):
        states = _gather(group, (group.rank_in_group, size))
        if states[0][1] <= 0:
            return 0
        _gather(group, None)      # every rank reads the same entry
        return 1


    def own_index(group, size):
        states = _gather(group, (group.rank_in_group, size))
        if states[group.rank_in_group][1] <= 0:
            return 0
        _gather(group, None)      # reported: this rank's own entry
        return 1
"""


def test_a_gathered_entry_is_agreed_only_at_an_agreed_index():
    lines = sorted(f.line for f in check_source(textwrap.dedent(SHAPES), report="per-site").findings)
    source_lines = textwrap.dedent(SHAPES).splitlines()
    reported = sorted(i + 1 for i, text in enumerate(source_lines) if "# reported" in text)
    assert lines == reported
