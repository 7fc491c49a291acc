"""Negative (safe): every rank gathers the full state dict; only rank 0 logs and writes it.

Upstream: pytorch/torchtune, recipes/full_finetune_distributed.py `save_checkpoint`
          at commit 37fe07c490815828f11cd81ae8705e4e3f50d6bf ("add barrier").
Group: world (the full-state-dict gather of the FSDP model).
Why it looks divergent: several `if self._is_rank_zero:` blocks surround the
checkpoint code.
Why it is safe: the gather is called on every rank; the rank-0 blocks only
log, time and write files.
"""

import logging
import time

import torch.distributed as dist

log = logging.getLogger(__name__)


def gather_full_state_dict(model, is_rank_zero):
    full = {}
    for name, param in model.state_dict().items():
        tensor = param.full_tensor() if hasattr(param, "full_tensor") else param
        if is_rank_zero:
            full[name] = tensor.cpu()
    dist.barrier()
    return full


class FinetuneRecipe:
    def __init__(self, model, checkpointer):
        self._model = model
        self._checkpointer = checkpointer
        self._is_rank_zero = dist.get_rank() == 0

    def save_checkpoint(self, epoch):
        if self._is_rank_zero:
            log.info("Saving checkpoint: gathering the full model state dict...")
            start = time.perf_counter()
        state_dict = gather_full_state_dict(self._model, self._is_rank_zero)
        if self._is_rank_zero:
            log.info("Gathering took %.2f s", time.perf_counter() - start)
            self._checkpointer.save_checkpoint({"model": state_dict}, epoch=epoch)
