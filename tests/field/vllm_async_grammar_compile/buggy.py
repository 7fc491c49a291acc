"""Structured output: grammars compiled on a background thread decide what a rank schedules.

Upstream: vllm-project/vllm PR #29996 ("[BugFix] Adding env variable to disable async
          grammar compilation"), on top of PR #28774.
Group: dp (the step's `coordinate_batch_across_dp` all-reduce over the DP CPU group).
Why ranks diverge: in external-launcher mode every rank receives the same
requests, but a request with a grammar waits until its grammar, compiled by
a thread pool, is ready.  Whether that future is done at scheduling time
depends on each process's thread timing, so one rank schedules the request
(and enters the step's all-reduce) while another schedules nothing.
Variant: buggy -- `future.done()` of a background compilation gates the step.
"""

from concurrent.futures import ThreadPoolExecutor

import torch
import torch.distributed as dist

from vllm.distributed.parallel_state import get_dp_group

WAITING, WAITING_FOR_FSM = "waiting", "waiting_for_fsm"


class GrammarCompiler:
    def __init__(self, max_workers):
        self.executor = ThreadPoolExecutor(max_workers=max_workers)

    def grammar_init(self, request):
        request.grammar_future = self.executor.submit(self._compile, request.grammar_spec)
        request.status = WAITING_FOR_FSM

    def _compile(self, spec):
        return spec.build()


class StepRunner:
    def __init__(self, waiting):
        self.waiting = waiting

    def schedule(self):
        scheduled = []
        for request in self.waiting:
            if request.status == WAITING_FOR_FSM:
                if not request.grammar_future.done():
                    continue
                request.grammar = request.grammar_future.result()
                request.status = WAITING
            scheduled.append(request)
        return scheduled

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
        return self.coordinate_batch_across_dp(num_tokens)  # expect: CSL102
