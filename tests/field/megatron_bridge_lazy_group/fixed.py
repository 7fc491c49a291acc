"""Pipeline bridge: broadcast groups created lazily on first use inside the 1F1B schedule.

Upstream: NVIDIA/Megatron-LM, fix commit 88f1a1265f83af1a84b4ed22875e243f6696519e
          ("bridge: eager-init process groups and make leader broadcasts unconditional").
Group: world (creating a subgroup is a collective over all ranks).
Why ranks diverge: see buggy.py.
Variant: fixed -- every rank creates every bridge subgroup at construction,
in the same order, before the schedule starts.
"""

import torch.distributed as dist


class StageBridge:
    def __init__(self, leader, member_ranks, all_member_lists):
        self.leader = leader
        self.member_ranks = sorted(member_ranks)
        self._group = None
        for ranks in all_member_lists:
            group = dist.new_group(ranks=sorted(ranks))
            if sorted(ranks) == self.member_ranks:
                self._group = group

    def forward_activation(self, tensor):
        dist.broadcast(tensor, src=self.leader, group=self._group)
        return tensor
