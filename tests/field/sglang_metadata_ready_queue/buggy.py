"""PD decode transfer queue: a rank-local metadata check removes requests after the poll consensus.

Upstream: sgl-project/sglang PR #26394 ("[PD] Fix cross-rank queue divergence by gating
          metadata readiness before all-reduce").
Group: the attention tensor-parallel CPU group (`poll_and_all_reduce`).
Why ranks diverge: the KV poll is agreed by an all-reduce, but the metadata
written by a separate RDMA operation may have landed on one rank and not yet
on another.  A rank that sees it removes the request from its queue; the
other keeps it.  From then on the queues differ: the emptiness test and the
next poll all-reduce run on different queues.
Variant: buggy -- the local metadata test runs after the consensus and
changes the queue.
"""

import torch
import torch.distributed as dist

SUCCESS = 4


def poll_and_all_reduce(receivers, group):
    polls = torch.tensor([r.poll() for r in receivers], dtype=torch.uint8)
    dist.all_reduce(polls, op=dist.ReduceOp.MIN, group=group)
    return polls.tolist()


class TransferQueue:
    def __init__(self, tp_cpu_group):
        self.queue = []
        self.tp_cpu_group = tp_cpu_group

    def pop_transferred(self):
        if not self.queue:
            return []
        polls = poll_and_all_reduce([req.receiver for req in self.queue], self.tp_cpu_group)  # expect: CSL102
        done = [req for req, poll in zip(self.queue, polls) if poll == SUCCESS and req.metadata_landed()]
        self.queue = [req for req in self.queue if req not in done]
        return done
