"""Generation in server and colocate mode: images gathered only on ranks that have images.

Upstream: huggingface/trl, fix commit 7fd17112c54dfb102dac0e8621fca9773931f26f
          ("Fix deadlock issue by ensuring images are always gathered in VLLMGeneration").
Group: world (`gather_object`) and the vLLM tensor-parallel group (`all_gather_object`).
Why ranks diverge: with a mixed text/image dataset, `images` is None on a
rank whose batch holds no image and a list elsewhere.  Ranks with images
enter the object gather; the others skip it.
Variant: buggy -- `images is not None` (per-rank data) guards the gathers.
"""

import torch.distributed as dist
from accelerate.utils import gather_object


class VLLMGeneration:
    def __init__(self, accelerator, mode, tp_group, tensor_parallel_size):
        self.accelerator = accelerator
        self.mode = mode
        self.tp_group = tp_group
        self.tensor_parallel_size = tensor_parallel_size

    def collect_server_inputs(self, prompts, images):
        all_prompts = gather_object(prompts)
        all_images = gather_object(images) if images is not None else None  # expect: CSL101
        return all_prompts, all_images

    def collect_colocate_inputs(self, prompts, images):
        gathered_prompts = [None for _ in range(self.tensor_parallel_size)]
        dist.all_gather_object(gathered_prompts, prompts, group=self.tp_group)
        all_prompts = [p for chunk in gathered_prompts for p in chunk]
        all_images = None
        if images is not None:
            gathered_images = [None for _ in range(self.tensor_parallel_size)]
            dist.all_gather_object(gathered_images, images, group=self.tp_group)  # expect: CSL101
            all_images = [img for chunk in gathered_images for img in chunk]
        return all_prompts, all_images
