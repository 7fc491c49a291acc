"""Vision-language embeddings: the vision tower runs only on ranks whose batch has images.

Upstream: volcengine/verl, fix commit 4e9faafc949e1ff3734203dbe501b3d85e007b6c
          (PR #3670, "[model] fix: stuck issue with mixed text-image data").
Group: the FSDP data-parallel group (the sharded vision tower all-gathers its
weights in every forward).
Why ranks diverge: see buggy.py.
Variant: fixed -- a text-only rank always runs the dummy vision forward, in
training and in eval, so every rank runs the tower exactly once.
"""

import torch
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


def shard_model(model):
    model.visual = FSDP(model.visual)
    return FSDP(model)


def get_input_embeds(model, input_ids, pixel_values=None, image_grid_thw=None):
    inputs_embeds = model.get_input_embeddings()(input_ids)
    if pixel_values is not None:
        image_embeds = model.visual(pixel_values, grid_thw=image_grid_thw)
        image_mask = (input_ids == model.config.image_token_id).unsqueeze(-1)
        inputs_embeds = inputs_embeds.masked_scatter(image_mask, image_embeds.to(inputs_embeds.dtype))
    if pixel_values is None:
        dummy_pixels = torch.zeros((16, 1176), dtype=inputs_embeds.dtype, device=inputs_embeds.device)
        dummy_grid = torch.tensor([[1, 4, 4]], dtype=torch.long, device=inputs_embeds.device)
        image_embeds = model.visual(dummy_pixels, grid_thw=dummy_grid)
        inputs_embeds = inputs_embeds + 0.0 * image_embeds.mean()
    return inputs_embeds
