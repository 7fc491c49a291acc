"""PPO rollout sampling with a Gemini-sharded actor: early stopping on this rank's sequences.

Upstream: hpcaitech/ColossalAI, fix commit c474fda282da90672527d5ad638d23bc4eec1ff8
          (PR #3162, "[chatgpt] fix ppo training hanging problem with gemini").
Group: world (the data-parallel group Gemini shards the actor's parameters over;
each forward gathers the parameter chunks).
Why ranks diverge: with early stopping, a rank leaves the sampling loop as
soon as all of its own sequences have produced EOS.  Under Gemini every
forward gathers parameter chunks from all ranks, so the ranks still sampling
wait for the one that left.
Variant: buggy -- `unfinished.max() == 0` on per-rank data breaks the loop.
"""

import torch
from colossalai.nn.parallel import GeminiDDP


def wrap_actor(module, device):
    return GeminiDDP(module, device=device, placement_policy="cuda")


def sample(model, input_ids, max_length, early_stopping=False, eos_token_id=None, pad_token_id=None):
    unfinished = input_ids.new(input_ids.shape[0]).fill_(1)
    for _ in range(input_ids.size(1), max_length):
        logits = model(input_ids)["logits"][:, -1, :]  # expect: CSL102
        next_tokens = torch.multinomial(torch.softmax(logits, dim=-1), num_samples=1).squeeze(1)
        if eos_token_id is not None:
            next_tokens = next_tokens * unfinished + pad_token_id * (1 - unfinished)
        input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
        if eos_token_id is not None:
            unfinished = unfinished.mul((next_tokens != eos_token_id).long())
        if early_stopping and unfinished.max() == 0:
            break
    return input_ids
