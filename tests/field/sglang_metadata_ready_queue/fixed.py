"""PD decode transfer queue: a rank-local metadata check removes requests after the poll consensus.

Upstream: sgl-project/sglang PR #26394 ("[PD] Fix cross-rank queue divergence by gating
          metadata readiness before all-reduce").
Group: the attention tensor-parallel CPU group (`poll_and_all_reduce`).
Why ranks diverge: see buggy.py.
Variant: fixed -- a rank whose metadata has not landed reports the request as
still transferring *before* the MIN all-reduce, so the agreed poll already
covers it and every rank removes the same requests.
"""

import torch
import torch.distributed as dist

SUCCESS = 4
TRANSFERRING = 3


def poll_and_all_reduce(receivers, group, metadata_ready):
    local = []
    for receiver, ready in zip(receivers, metadata_ready):
        state = receiver.poll()
        local.append(TRANSFERRING if state == SUCCESS and not ready else state)
    polls = torch.tensor(local, dtype=torch.uint8)
    dist.all_reduce(polls, op=dist.ReduceOp.MIN, group=group)
    return polls.tolist()


class TransferQueue:
    def __init__(self, tp_cpu_group):
        self.queue = []
        self.tp_cpu_group = tp_cpu_group

    def pop_transferred(self):
        if not self.queue:
            return []
        polls = poll_and_all_reduce(
            [req.receiver for req in self.queue], self.tp_cpu_group, [req.metadata_landed() for req in self.queue]
        )
        done = [req for req, poll in zip(self.queue, polls) if poll == SUCCESS]
        self.queue = [req for req in self.queue if req not in done]
        return done
