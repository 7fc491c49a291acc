"""Speculative decoding with a batch-size-dependent draft length under data parallelism.

Upstream: vllm-project/vllm PR #45963 ("Disable dynamic speculative decoding when DP is enabled").
Group: dp (each draft step coordinates the batch across the DP group before
the drafter's forward).
Why ranks diverge: the number of draft tokens K is chosen from this rank's
scheduled request count.  Under data parallelism the ranks schedule different
numbers of requests, pick different K, and run different numbers of draft
steps -- each with a DP collective.
Variant: buggy -- the draft loop's trip count comes from per-rank batch size.
"""

import torch
import torch.distributed as dist

from vllm.distributed.parallel_state import get_dp_group


class DraftProposer:
    def __init__(self, speculative_config, drafter):
        self.static_k = speculative_config.num_speculative_tokens
        self.k_by_batch_size = speculative_config.num_speculative_tokens_per_batch_size
        self.drafter = drafter

    def draft_length(self, num_reqs):
        if self.k_by_batch_size:
            for max_batch, k in sorted(self.k_by_batch_size.items()):
                if num_reqs <= max_batch:
                    return k
        return self.static_k

    def _sync_batch(self, num_tokens):
        group = get_dp_group()
        counts = torch.zeros(group.world_size, dtype=torch.int32)
        counts[group.rank_in_group] = num_tokens
        dist.all_reduce(counts, group=group.cpu_group)
        return int(counts.max())

    def propose(self, batch):
        drafts = []
        hidden = batch.hidden_states
        for _ in range(self.draft_length(batch.num_reqs)):
            padded = self._sync_batch(batch.num_tokens)  # expect: CSL103
            hidden, token_ids = self.drafter(hidden, padded)
            drafts.append(token_ids)
        return drafts
