"""Model-engine warmup under attention-DP: ranks without room for the warmup batch skip the forward.

Upstream: NVIDIA/TensorRT-LLM PR #14126 ("[None][fix] Fail loudly on asymmetric warmup
          batch under attention-DP"); the deadlock is analysed in PR #13998 ("sync warmup
          forward decision across TP ranks").
Group: tp (under attention-DP the forward allgathers the per-rank token counts
over the TP group).
Why ranks diverge: see buggy.py.
Variant: fixed -- the ranks allgather whether they have a warmup batch: all
skip together, all run together, or all raise the same error naming the
ranks that had no room.
"""

from contextlib import contextmanager


class WarmupEngine:
    def __init__(self, dist, enable_attention_dp):
        self.dist = dist
        self.enable_attention_dp = enable_attention_dp

    def forward(self, batch):
        if self.enable_attention_dp:
            all_rank_num_tokens = self.dist.tp_allgather(batch.num_tokens)
            batch.all_rank_num_tokens = all_rank_num_tokens
        return batch

    def _create_warmup_request(self, resource_manager, num_tokens):
        kv_cache = resource_manager.get_resource_manager("kv_cache_manager")
        if kv_cache.get_num_free_blocks() * kv_cache.tokens_per_block < num_tokens:
            return None
        return kv_cache.add_dummy_requests(request_ids=[0], token_nums=[num_tokens])

    @contextmanager
    def _release_batch_context(self, batch, resource_manager):
        try:
            yield batch
        finally:
            if batch is not None:
                resource_manager.free_resources(batch)

    def _all_tp_ranks_have_batch(self, batch):
        if self.dist.tp_size == 1:
            return batch is not None
        have = self.dist.tp_allgather(batch is not None)
        if any(have) and not all(have):
            missing = [rank for rank, ok in enumerate(have) if not ok]
            raise RuntimeError(f"no room for the warmup batch on TP ranks {missing}; "
                               "raise kv_cache_free_gpu_mem_fraction")
        return all(have)

    def general_warmup(self, resource_manager, num_tokens):
        request = self._create_warmup_request(resource_manager, num_tokens)
        with self._release_batch_context(request, resource_manager) as batch:
            if self._all_tp_ranks_have_batch(batch):
                self.forward(batch)
