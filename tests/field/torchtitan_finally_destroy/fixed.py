"""Entry point: the process group is destroyed in `finally`, also after a rank-local error.

Upstream: pytorch/torchtitan, fix commit 6b11290c1e45221e097aa4a54d4ab52bf067d0b5
          (PR #1342, "Only calls destroy_process_group if the trainer exist successfully").
Group: world (the default process group).
Why ranks diverge: see buggy.py.
Variant: fixed -- on an exception the trainer is closed and the error
re-raised (the launcher tears the job down); the process group is destroyed
only after a successful run, which every rank reaches.
"""

import logging

import torch

logger = logging.getLogger(__name__)


def main(config, trainer_cls):
    trainer = None
    try:
        trainer = trainer_cls(config)
        trainer.train()
    except Exception:
        if trainer:
            trainer.close()
        raise
    else:
        trainer.close()
        torch.distributed.destroy_process_group()
        logger.info("Process group destroyed.")
