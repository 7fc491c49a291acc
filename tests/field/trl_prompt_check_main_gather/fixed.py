"""A debug consistency check that gathers prompts on the main process only.

Upstream: huggingface/trl, fix commit 546cab4fcd2f96c36116018f4828dad5654ba26c
          ("fix desync", trl/trainer/qwen_grpo_trainer.py).
Group: world (accelerate's `gather_object`).
Why ranks diverge: see buggy.py.
Variant: fixed (as upstream) -- the main-process-only gather is removed; the
ranks meet at the unconditional barrier and gather.
"""

import torch


class RewardStep:
    def __init__(self, accelerator, num_generations, reward_weights):
        self.accelerator = accelerator
        self.num_generations = num_generations
        self.reward_weights = reward_weights

    def score(self, prompts_text, rewards_per_func):
        self.accelerator.wait_for_everyone()
        rewards = (rewards_per_func * self.reward_weights.unsqueeze(0)).sum(dim=1)
        return self.accelerator.gather(rewards)
