"""Pipeline bridge: broadcast groups created lazily on first use inside the 1F1B schedule.

Upstream: NVIDIA/Megatron-LM, fix commit 88f1a1265f83af1a84b4ed22875e243f6696519e
          ("bridge: eager-init process groups and make leader broadcasts unconditional").
Group: world (creating a subgroup is a collective over all ranks).
Why ranks diverge: the subgroup is created the first time a rank sends
through the bridge.  In the 1F1B schedule the stages reach their first send at
different points (warm-up and steady phases are skewed), so some ranks are
inside `new_group` while others are already in a later collective.  Whether
the cache holds the group yet is per-rank history.
Variant: buggy -- group creation hides behind a per-rank cache test.
"""

import torch.distributed as dist


class StageBridge:
    _group_cache = {}

    def __init__(self, leader, member_ranks):
        self.leader = leader
        self.member_ranks = sorted(member_ranks)

    def _broadcast_group(self):
        key = tuple(self.member_ranks)
        if key not in StageBridge._group_cache:
            StageBridge._group_cache[key] = dist.new_group(ranks=list(key))  # expect: CSL101
        return StageBridge._group_cache[key]

    def forward_activation(self, tensor):
        dist.broadcast(tensor, src=self.leader, group=self._broadcast_group())
        return tensor
