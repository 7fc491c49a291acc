"""Saving the best model as a .nemo file: a local existence check in front of a barrier.

Upstream: NVIDIA/NeMo, fix commit 0ab5bb20563a30d933127fd64b9aa30f87dc154b
          ("fix race condiction that will cause NeMo to hang").
Group: world (`torch.distributed.barrier()` before the .nemo save).
Why ranks diverge: see buggy.py.
Variant: fixed (as upstream) -- every rank first waits in a barrier, so rank
0's write has landed before anyone tests for the file.  The test stays local:
upstream relies on a filesystem shared by all ranks after the barrier.
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
        if torch.distributed.is_initialized():
            torch.distributed.barrier()
        if not os.path.exists(self.best_model_path):
            return output
        if self.best_model_path == self.previous_best_path:
            return output
        self.previous_best_path = self.best_model_path
        state = torch.load(self.best_model_path, map_location="cpu")
        pl_module.load_state_dict(state["state_dict"], strict=True)
        if torch.distributed.is_initialized():
            torch.distributed.barrier()
        pl_module.save_to(save_path=self.nemo_path)
        return output
