"""Negative (safe): local conditions packed into one status tuple, always allgathered, decided from the result.

Upstream: NVIDIA/TensorRT-LLM, tensorrt_llm/_torch/pyexecutor/py_executor.py
          (`_is_benchmark_disagg_fill_complete`, described as the rank-safe sibling
          of the fill gate in this project's seed 000).
Group: tp (the model-parallel status allgather).
Why it looks divergent: every input is rank-local (this rank's queue, its
fill flag, its free KV blocks).
Why it is safe: no rank returns early; each packs its local conditions,
every rank enters the allgather, and the decision is taken from the gathered
list, which is identical everywhere.
"""


class FillGate:
    def __init__(self, dist, kv_cache_manager, target_requests):
        self.dist = dist
        self.kv_cache_manager = kv_cache_manager
        self.target_requests = target_requests
        self.fill_phase_active = True
        self.active_requests = []

    def _allgather_model_parallel_status(self, status):
        return self.dist.tp_allgather(status)

    def is_fill_complete(self):
        status = (
            int(self.fill_phase_active),
            len(self.active_requests),
            self.kv_cache_manager.get_num_free_blocks(),
        )
        everyone = self._allgather_model_parallel_status(status)
        complete = all(active == 0 or count >= self.target_requests for active, count, _ in everyone)
        if complete:
            self.fill_phase_active = False
        return complete
