"""High-entropy token mask: an early return on an empty local selection skips the gathers.

Upstream: huggingface/trl, fix commit 1b25d3b2ed20e8d13e3c6dcefd65ba211f7f1e95
          (PR #4041, "[GRPO] Fix potential hang in `get_high_entropy_mask`").
Group: world (accelerate's `gather` over all processes).
Why ranks diverge: see buggy.py.
Variant: fixed -- every rank pads (possibly an empty selection) and gathers;
the emptiness test runs on the gathered values, which are the same everywhere.
"""

import torch


class EntropyMasker:
    def __init__(self, accelerator):
        self.accelerator = accelerator

    def high_entropy_mask(self, entropies, mask, threshold):
        local = entropies[mask.bool()].float()
        pad_value = -1e9  # entropies are never negative
        padded = self.accelerator.pad_across_processes(local, dim=0, pad_index=pad_value)
        gathered = self.accelerator.gather(padded)
        gathered = gathered[gathered != pad_value]
        if gathered.numel() == 0:
            return torch.zeros_like(entropies, dtype=torch.bool)
        cutoff = torch.quantile(gathered, threshold)
        return (entropies * mask.float() >= cutoff) & mask.bool()
