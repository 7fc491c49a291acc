"""Validation over a per-rank shard until it runs out, with an FSDP-sharded model.

Upstream: pytorch/torchtitan, fix commit f809d57d8170e9e5281a1bb96103089f7ce9b92e
          (PR #1634, "Solving the validation hanging issue"; issue #1618).
Group: the data-parallel mesh (every forward of the fully-sharded model
all-gathers parameters; the final loss is averaged over the mesh).
Why ranks diverge: with `steps = -1` each rank consumes its own shard of the
validation set until its iterator is exhausted.  The shards differ in length
(by up to one batch, or more after filtering), so a rank that is done stops
forwarding while the others wait in the next forward's all-gather.
Variant: buggy -- the loop ends at this rank's own StopIteration.
"""

import torch
from torch.distributed.fsdp import fully_shard

from torchtitan.distributed import utils as dist_utils


def shard(model):
    for block in model.layers:
        fully_shard(block)
    return fully_shard(model)


class Validator:
    def __init__(self, dataloader, loss_fn, steps, dp_mesh):
        self.dataloader = dataloader
        self.loss_fn = loss_fn
        self.steps = steps
        self.dp_mesh = dp_mesh

    @torch.no_grad()
    def validate(self, model):
        model.eval()
        total = torch.zeros((), device="cuda")
        num_steps = 0
        for inputs, labels in self.dataloader:
            if self.steps != -1 and num_steps >= self.steps:
                break
            total += self.loss_fn(model(inputs), labels)  # expect: CSL103
            num_steps += 1
        loss = total / max(num_steps, 1)
        return dist_utils.dist_mean(loss, self.dp_mesh)
