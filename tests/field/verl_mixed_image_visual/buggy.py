"""Vision-language embeddings: the vision tower runs only on ranks whose batch has images.

Upstream: volcengine/verl, fix commit 4e9faafc949e1ff3734203dbe501b3d85e007b6c
          (PR #3670, "[model] fix: stuck issue with mixed text-image data").
Group: the FSDP data-parallel group (the sharded vision tower all-gathers its
weights in every forward).
Why ranks diverge: with mixed text/image data, `pixel_values` is None on a rank
whose micro-batch holds text only.  A dummy vision forward kept such ranks in
step during training, but only when `model.training` -- in the no-grad
log-prob pass (eval mode) text-only ranks skip the tower and the ranks with
images wait in its all-gather.
Variant: buggy -- the vision forward depends on per-rank data and the dummy
path on the module mode.
"""

import torch
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


def shard_model(model):
    model.visual = FSDP(model.visual)
    return FSDP(model)


def get_input_embeds(model, input_ids, pixel_values=None, image_grid_thw=None):
    inputs_embeds = model.get_input_embeddings()(input_ids)
    if pixel_values is not None:
        image_embeds = model.visual(pixel_values, grid_thw=image_grid_thw)  # expect: CSL101
        image_mask = (input_ids == model.config.image_token_id).unsqueeze(-1)
        inputs_embeds = inputs_embeds.masked_scatter(image_mask, image_embeds.to(inputs_embeds.dtype))
    if model.training and pixel_values is None:
        dummy_pixels = torch.zeros((16, 1176), dtype=inputs_embeds.dtype, device=inputs_embeds.device)
        dummy_grid = torch.tensor([[1, 4, 4]], dtype=torch.long, device=inputs_embeds.device)
        image_embeds = model.visual(dummy_pixels, grid_thw=dummy_grid)  # expect: CSL101
        inputs_embeds = inputs_embeds + 0.0 * image_embeds.mean()
    return inputs_embeds
