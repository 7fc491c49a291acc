"""Draft-model trainer shared by both variants: a micro-batch with no sample long
enough to form one block has nothing to learn from, and the forward says so by
raising (NVIDIA-NeMo/Automodel, `components/speculative/dflash/core.py` at the
parent of db0e7a26ff7a2e914a7368c6108024ea3a9041f3)."""

import torch


class NoValidAnchorsError(ValueError):
    """No sample of the micro-batch has `block_size + 1` supervised tokens."""


class BlockDraftTrainer(torch.nn.Module):
    def __init__(self, draft, block_size):
        super().__init__()
        self.draft = draft
        self.block_size = block_size

    def forward(self, input_ids, loss_mask):
        supervised = loss_mask.sum(dim=1)
        anchors = int((supervised - self.block_size).clamp_min(0).max().item())
        if anchors <= 0:
            raise NoValidAnchorsError("every sample is shorter than one block")
        return self.draft(input_ids, loss_mask, anchors)
