"""RL log-prob pass: each data-parallel rank loops over its own number of trajectories.

Upstream: NVIDIA/Megatron-LM, fix commit 975a0c3b4c85827a4383d1a37db2961662f10150
          ("fix(cp): CP=2 silent-hang fixes + zigzag scatter + DP-split multi-turn
          padding", the `prepare_data_for_update` part).
Group: world (the timers' barrier on the default group, once per forward-backward).
Why ranks diverge: rollouts are split evenly over the data-parallel ranks,
but a multi-turn rollout yields one trajectory per turn, so one rank may get
32 trajectories and another 192.  The log-prob pass iterates over this
rank's loader and every iteration starts a timer with a barrier: ranks with
fewer trajectories race ahead to the next barrier.
Variant: buggy -- the loop's trip count is this rank's trajectory count.
"""

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, TensorDataset


class BarrierTimer:
    def start(self, barrier=False):
        if barrier:
            dist.barrier()


def trajectories_for_rank(rollouts, dp_rank, dp_size):
    mine = rollouts[dp_rank::dp_size]
    return torch.stack([turn for rollout in mine for turn in rollout.turns])


def compute_logprobs(model, rollouts, dp_rank, dp_size, micro_batch_size):
    trajs = trajectories_for_rank(rollouts, dp_rank, dp_size)
    loader = DataLoader(TensorDataset(trajs), batch_size=micro_batch_size)
    timer = BarrierTimer()
    batches = iter(loader)
    outputs = []
    for _ in range(len(loader)):
        timer.start(barrier=True)  # expect: CSL103
        (batch,) = next(batches)
        outputs.append(model(batch))
    return outputs
