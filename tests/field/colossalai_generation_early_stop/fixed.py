"""PPO rollout sampling with a Gemini-sharded actor: early stopping on this rank's sequences.

Upstream: hpcaitech/ColossalAI, fix commit c474fda282da90672527d5ad638d23bc4eec1ff8
          (PR #3162, "[chatgpt] fix ppo training hanging problem with gemini").
Group: world (the data-parallel group Gemini shards the actor's parameters over;
each forward gathers the parameter chunks).
Why ranks diverge: see buggy.py.
Variant: fixed -- the unfinished flags are all-reduced across ranks before
the stop test, so every rank stops at the same step.
"""

import torch
import torch.distributed as dist
from colossalai.nn.parallel import GeminiDDP


def wrap_actor(module, device):
    return GeminiDDP(module, device=device, placement_policy="cuda")


def all_sequences_finished(unfinished):
    if dist.is_initialized() and dist.get_world_size() > 1:
        unfinished = unfinished.clone()
        dist.all_reduce(unfinished)
    return unfinished.max() == 0


def sample(model, input_ids, max_length, early_stopping=False, eos_token_id=None, pad_token_id=None):
    unfinished = input_ids.new(input_ids.shape[0]).fill_(1)
    for _ in range(input_ids.size(1), max_length):
        logits = model(input_ids)["logits"][:, -1, :]
        next_tokens = torch.multinomial(torch.softmax(logits, dim=-1), num_samples=1).squeeze(1)
        if eos_token_id is not None:
            next_tokens = next_tokens * unfinished + pad_token_id * (1 - unfinished)
        input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
        if eos_token_id is not None:
            unfinished = unfinished.mul((next_tokens != eos_token_id).long())
        if early_stopping and all_sequences_finished(unfinished):
            break
    return input_ids
