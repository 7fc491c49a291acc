"""Structured output: grammars compiled on a background thread decide what a rank schedules.

Upstream: vllm-project/vllm PR #29996 ("[BugFix] Adding env variable to disable async
          grammar compilation"), on top of PR #28774.
Group: dp (the step's `coordinate_batch_across_dp` all-reduce over the DP CPU group).
Why ranks diverge: see buggy.py.
Variant: fixed (as upstream, opt-in) -- grammars are compiled synchronously
when the request arrives, so the schedule depends only on the requests,
which are the same on every rank in external-launcher mode.
"""

import torch
import torch.distributed as dist

from vllm.distributed.parallel_state import get_dp_group

WAITING = "waiting"


class GrammarCompiler:
    def grammar_init(self, request):
        request.grammar = self._compile(request.grammar_spec)
        request.status = WAITING

    def _compile(self, spec):
        return spec.build()


class StepRunner:
    def __init__(self, waiting):
        self.waiting = waiting

    def schedule(self):
        return [request for request in self.waiting if request.status == WAITING]

    def coordinate_batch_across_dp(self, num_tokens):
        group = get_dp_group()
        counts = torch.zeros(group.world_size, dtype=torch.int32)
        counts[group.rank_in_group] = num_tokens
        dist.all_reduce(counts, group=group.cpu_group)
        return counts

    def step(self):
        scheduled = self.schedule()
        num_tokens = sum(r.num_new_tokens for r in scheduled)
        if num_tokens == 0:
            return None
        return self.coordinate_batch_across_dp(num_tokens)
