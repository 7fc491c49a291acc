"""Model runner: a step with no scheduled tokens returns before the DP batch coordination.

Upstream: vllm-project/vllm PR #28774 ("[BugFix] Corner case that could cause out-of-sync
          with external launcher mode and dp >1"); follow-up PR #29433 ("dummy run corner case").
Group: dp (`coordinate_batch_across_dp` all-reduces the token counts over the
data-parallel CPU group).
Why ranks diverge: see buggy.py.
Variant: fixed (as upstream) -- before returning empty, a rank runs a dummy
step, which joins the coordination all-reduce.  Upstream gates this on the
external-launcher backend, where the hang was seen; issue #43547 reports the
same drift for the ray and mp backends.
"""

import torch
import torch.distributed as dist

from vllm.distributed.parallel_state import get_dp_group

EMPTY_MODEL_RUNNER_OUTPUT = object()


class GPUModelRunner:
    def __init__(self, model, parallel_config):
        self.model = model
        self.parallel_config = parallel_config

    def coordinate_batch_across_dp(self, num_tokens):
        group = get_dp_group()
        counts = torch.zeros(group.world_size, dtype=torch.int32)
        counts[group.rank_in_group] = num_tokens
        dist.all_reduce(counts, group=group.cpu_group)
        return counts

    def _dummy_run(self, num_tokens):
        self.coordinate_batch_across_dp(num_tokens)
        return self.model(torch.zeros(num_tokens, dtype=torch.long))

    def execute_model(self, scheduler_output):
        num_scheduled_tokens = scheduler_output.total_num_scheduled_tokens
        if not num_scheduled_tokens:
            if (
                self.parallel_config.distributed_executor_backend == "external_launcher"
                and self.parallel_config.data_parallel_size > 1
            ):
                self._dummy_run(1)
            return EMPTY_MODEL_RUNNER_OUTPUT
        tokens_across_dp = self.coordinate_batch_across_dp(num_scheduled_tokens)
        padded = int(tokens_across_dp.max())
        return self.model(scheduler_output.input_ids(padded))
