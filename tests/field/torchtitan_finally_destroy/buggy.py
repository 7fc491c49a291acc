"""Entry point: the process group is destroyed in `finally`, also after a rank-local error.

Upstream: pytorch/torchtitan, fix commit 6b11290c1e45221e097aa4a54d4ab52bf067d0b5
          (PR #1342, "Only calls destroy_process_group if the trainer exist successfully").
Group: world (the default process group).
Why ranks diverge: when training raises on one rank (a data error, an OOM),
that rank runs the `finally` block and blocks in `destroy_process_group`
while the other ranks are still inside a training collective; the failure
turns into a hang.
Variant: buggy -- the teardown collective is reached on the exception path.
"""

import logging

import torch

logger = logging.getLogger(__name__)


def main(config, trainer_cls):
    trainer = None
    try:
        trainer = trainer_cls(config)
        trainer.train()
    finally:
        if trainer:
            trainer.close()
        if torch.distributed.is_initialized():
            torch.distributed.destroy_process_group()  # expect: CSL104
            logger.info("Process group destroyed.")
