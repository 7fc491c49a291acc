"""RL log-prob pass: each data-parallel rank loops over its own number of trajectories.

Upstream: NVIDIA/Megatron-LM, fix commit 975a0c3b4c85827a4383d1a37db2961662f10150
          ("fix(cp): CP=2 silent-hang fixes + zigzag scatter + DP-split multi-turn
          padding", the `prepare_data_for_update` part).
Group: world (the timers' barrier on the default group, once per forward-backward).
Why ranks diverge: see buggy.py.
Variant: fixed -- every rank pads its trajectories with fully masked rows up
to the maximum count over the data-parallel group, so the loaders have the
same length everywhere.
"""

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset

from megatron.core import mpu


class BarrierTimer:
    def start(self, barrier=False):
        if barrier:
            dist.barrier()


def trajectories_for_rank(rollouts, dp_rank, dp_size):
    mine = rollouts[dp_rank::dp_size]
    return torch.stack([turn for rollout in mine for turn in rollout.turns])


def pad_to_group_max(trajs, pad_token):
    count = torch.tensor([trajs.shape[0]], dtype=torch.long, device=trajs.device)
    dist.all_reduce(count, op=dist.ReduceOp.MAX, group=mpu.get_data_parallel_group())
    missing = int(count.item()) - trajs.shape[0]
    if missing > 0:
        filler = torch.full((missing, trajs.shape[1]), pad_token, dtype=trajs.dtype, device=trajs.device)
        trajs = torch.cat([trajs, filler])
    return trajs


def compute_logprobs(model, rollouts, dp_rank, dp_size, micro_batch_size, pad_token):
    trajs = pad_to_group_max(trajectories_for_rank(rollouts, dp_rank, dp_size), pad_token)
    loader = DataLoader(TensorDataset(trajs), batch_size=micro_batch_size)
    timer = BarrierTimer()
    batches = iter(loader)
    outputs = []
    for _ in range(len(loader)):
        timer.start(barrier=True)
        (batch,) = next(batches)
        outputs.append(model(batch))
    return outputs
