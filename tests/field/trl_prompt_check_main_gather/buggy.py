"""A debug consistency check that gathers prompts on the main process only.

Upstream: huggingface/trl, fix commit 546cab4fcd2f96c36116018f4828dad5654ba26c
          ("fix desync", trl/trainer/qwen_grpo_trainer.py).
Group: world (accelerate's `gather_object`).
Why ranks diverge: the check that every generation shares one prompt sits in
an `is_main_process` block, but `gather_object` is a collective: the main
process waits in it while the other processes move on to the reward
computation and the next collective.
Variant: buggy -- a collective inside a main-process-only debug block.
"""

import torch
from accelerate.utils import gather_object


class RewardStep:
    def __init__(self, accelerator, num_generations, reward_weights):
        self.accelerator = accelerator
        self.num_generations = num_generations
        self.reward_weights = reward_weights

    def score(self, prompts_text, rewards_per_func):
        if self.accelerator.is_main_process:
            all_prompts = gather_object(prompts_text)  # expect: CSL101
            if len(set(all_prompts)) != 1:
                raise ValueError(f"all prompts of a group should be the same, got {all_prompts}")
        self.accelerator.wait_for_everyone()
        rewards = (rewards_per_func * self.reward_weights.unsqueeze(0)).sum(dim=1)
        return self.accelerator.gather(rewards)
