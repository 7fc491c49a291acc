"""Negative (safe): a DP engine loop where an idle rank runs a dummy batch and the wave state is all-reduced.

Upstream: vLLM 0.33.0, vllm/v1/engine/core.py (`DPEngineCoreProc.run_busy_loop` with
          `execute_dummy_batch` and `_has_global_unfinished_reqs`).
Group: dp.
Why it looks divergent: whether a rank steps real requests or a dummy batch
depends on its own queue.
Why it is safe: both arms run a forward with the same DP collective, and the
loop's continuation is decided by an all-reduce of the local flags.
"""

import torch
import torch.distributed as dist


class ModelExecutor:
    def __init__(self, model, dp_group):
        self.model = model
        self.dp_group = dp_group

    def _coordinate_batch(self, num_tokens):
        padded = torch.tensor([num_tokens])
        dist.all_reduce(padded, op=dist.ReduceOp.MAX, group=self.dp_group)
        return int(padded.item())

    def execute_model(self, batch):
        padded = self._coordinate_batch(batch.num_tokens)
        return self.model(batch.input_ids(padded))

    def execute_dummy_batch(self):
        padded = self._coordinate_batch(1)
        return self.model(torch.zeros(padded, dtype=torch.long))


class DPEngineLoop:
    def __init__(self, scheduler, model_executor: ModelExecutor, dp_group):
        self.scheduler = scheduler
        self.model_executor = model_executor
        self.dp_group = dp_group
        self.engines_running = True

    def _has_global_unfinished_reqs(self, local_unfinished):
        flag = torch.tensor([int(local_unfinished)])
        dist.all_reduce(flag, op=dist.ReduceOp.MAX, group=self.dp_group)
        return bool(flag.item())

    def run_busy_loop(self):
        while self.engines_running:
            local_unfinished = self.scheduler.has_unfinished_requests()
            if local_unfinished:
                self.model_executor.execute_model(self.scheduler.schedule())
            else:
                self.model_executor.execute_dummy_batch()
            self.engines_running = self._has_global_unfinished_reqs(local_unfinished)
