"""Model-engine warmup under attention-DP: ranks without room for the warmup batch skip the forward.

Upstream: NVIDIA/TensorRT-LLM PR #14126 ("[None][fix] Fail loudly on asymmetric warmup
          batch under attention-DP"); the deadlock is analysed in PR #13998 ("sync warmup
          forward decision across TP ranks").
Group: tp (under attention-DP the forward allgathers the per-rank token counts
over the TP group).
Why ranks diverge: under attention-DP each TP rank has its own KV-cache pool,
and their capacities differ at runtime.  Creating the warmup request returns
None on a rank that has no room, so that rank skips the forward (and its
`tp_allgather`) and runs ahead to a later world barrier, while the others
wait in the allgather on a different communicator.
Variant: buggy -- `batch is not None` (per-rank KV capacity) gates the forward.
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

    def general_warmup(self, resource_manager, num_tokens):
        request = self._create_warmup_request(resource_manager, num_tokens)
        with self._release_batch_context(request, resource_manager) as batch:
            if batch is not None:
                self.forward(batch)  # expect: CSL101
