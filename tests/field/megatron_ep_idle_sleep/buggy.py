"""Inference engine loop: an idle expert-parallel rank sleeps instead of joining the all-to-all.

Upstream: NVIDIA/Megatron-LM, fix commit 9637e6b9339b81055807138d36323fe21262ada9
          ("Run dummy_forward on idle ranks when EP consensus is disabled").
Group: ep (the MoE token dispatch is an all-to-all over the expert-parallel group).
Why ranks diverge: with the EP consensus all-reduce disabled, each rank steps
on its own pending-request count (its local waiting queue and active
requests).  A rank with work enters the forward and blocks in the expert
all-to-all; a rank without work sleeps, so the all-to-all never completes.
Variant: buggy -- the forward is reached only when this rank has local work.
"""

import asyncio

import torch
import torch.distributed as dist


class ExpertController:
    def __init__(self, ep_group, hidden):
        self.ep_group = ep_group
        self.hidden = hidden

    def forward(self, batch):
        routed = batch.tokens.float()
        received = torch.empty_like(routed)
        dist.all_to_all_single(received, routed, group=self.ep_group)
        return received

    def dummy_forward(self):
        empty = torch.zeros(1, self.hidden, device="cuda")
        received = torch.empty_like(empty)
        dist.all_to_all_single(received, empty, group=self.ep_group)


class DynamicEngine:
    def __init__(self, controller, context, ep_group, disable_ep_consensus):
        self.controller = controller
        self.context = context
        self.ep_group = ep_group
        self.disable_ep_consensus = disable_ep_consensus
        self.waiting_request_ids = []
        self.running = True

    async def async_step(self):
        batch = self.context.next_batch(self.waiting_request_ids)
        return self.controller.forward(batch)

    def _ep_total_pending(self, local_pending):
        pending = torch.tensor([local_pending], device="cuda")
        dist.all_reduce(pending, op=dist.ReduceOp.MAX, group=self.ep_group)
        return int(pending.item())

    async def run_engine_loop(self):
        while self.running:
            local_pending = len(self.waiting_request_ids) + self.context.active_request_count
            if self.disable_ep_consensus:
                if local_pending > 0:
                    await self.async_step()  # expect: CSL101
                else:
                    await asyncio.sleep(0.02)
                continue
            if self._ep_total_pending(local_pending) == 0:
                await asyncio.sleep(0.02)
            elif local_pending > 0:
                await self.async_step()
            else:
                self.controller.dummy_forward()
