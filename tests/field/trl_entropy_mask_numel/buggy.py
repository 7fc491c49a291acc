"""High-entropy token mask: an early return on an empty local selection skips the gathers.

Upstream: huggingface/trl, fix commit 1b25d3b2ed20e8d13e3c6dcefd65ba211f7f1e95
          (PR #4041, "[GRPO] Fix potential hang in `get_high_entropy_mask`").
Group: world (accelerate's `gather` over all processes).
Why ranks diverge: the entropies are those of this rank's completions.  A
rank whose mask selects no token (all padding) returns before the gathers
that compute the global threshold; the other ranks wait in them.
Variant: buggy -- `numel() == 0` of per-rank data returns before the gathers.
"""

import torch


class EntropyMasker:
    def __init__(self, accelerator):
        self.accelerator = accelerator

    def high_entropy_mask(self, entropies, mask, threshold):
        local = entropies[mask.bool()].float()
        if local.numel() == 0:
            return torch.zeros_like(entropies, dtype=torch.bool)
        local_len = torch.tensor([local.numel()], device=entropies.device)
        max_len = self.accelerator.gather(local_len).max().item()  # expect: CSL102
        padding = torch.zeros(max_len - local.numel(), device=local.device)
        padded = torch.cat([local, padding])
        valid = torch.cat([torch.ones_like(local), padding])
        all_values = self.accelerator.gather(padded)  # expect: CSL102
        all_valid = self.accelerator.gather(valid)  # expect: CSL102
        cutoff = torch.quantile(all_values[all_valid.bool()], threshold)
        return (entropies * mask.float() >= cutoff) & mask.bool()
