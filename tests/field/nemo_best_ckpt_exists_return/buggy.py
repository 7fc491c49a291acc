"""Saving the best model as a .nemo file: a local existence check in front of a barrier.

Upstream: NVIDIA/NeMo, fix commit 0ab5bb20563a30d933127fd64b9aa30f87dc154b
          ("fix race condiction that will cause NeMo to hang").
Group: world (`torch.distributed.barrier()` before the .nemo save).
Why ranks diverge: the best checkpoint is written by the global rank 0.  The
other ranks test `os.path.exists` on it at their own pace; a rank that looks
before the write has landed (or on a node that does not see the file)
returns, while the others enter the barrier in front of `save_to`.
Variant: buggy -- the early return depends on the local filesystem's view.
"""

import os

import torch

from lightning.pytorch.callbacks import ModelCheckpoint


class BestNemoCheckpoint(ModelCheckpoint):
    def __init__(self, nemo_path, **kwargs):
        super().__init__(**kwargs)
        self.nemo_path = nemo_path
        self.previous_best_path = ""

    def on_save_checkpoint(self, trainer, pl_module, checkpoint):
        output = super().on_save_checkpoint(trainer, pl_module, checkpoint)
        if not os.path.exists(self.best_model_path):
            return output
        if self.best_model_path == self.previous_best_path:
            return output
        self.previous_best_path = self.best_model_path
        state = torch.load(self.best_model_path, map_location="cpu")
        pl_module.load_state_dict(state["state_dict"], strict=True)
        if torch.distributed.is_initialized():
            torch.distributed.barrier()  # expect: CSL102
        pl_module.save_to(save_path=self.nemo_path)
        return output
