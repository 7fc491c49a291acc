"""Greedy decoding under ZeRO-3: a rank whose sequences are finished stops forwarding.

Upstream: huggingface/transformers PR #10753 ("[DeepSpeed] ZeRO Stage 3", which gave the
          generation loops `synced_gpus`); the hang is microsoft/DeepSpeed issue #860
          ("zero3 hangs in inference").
Group: world (the ZeRO-3 partition group: every forward all-gathers the layer weights).
Why ranks diverge: each rank decodes its own prompts and leaves the loop when
all of them hit EOS.  Under ZeRO-3 every forward gathers the partitioned
weights from all ranks, so a rank that stopped early leaves the others
waiting in the next forward's all-gather.
Variant: buggy -- the loop exit depends on this rank's sequences.
"""

import deepspeed
import torch
from transformers import AutoModelForCausalLM


def build_partitioned_model(config):
    with deepspeed.zero.Init():
        return AutoModelForCausalLM.from_config(config)


def greedy_decode(model, input_ids, max_length, eos_token_id):
    unfinished = torch.ones(input_ids.shape[0], dtype=torch.long, device=input_ids.device)
    while input_ids.shape[-1] < max_length:
        logits = model(input_ids).logits  # expect: CSL102
        next_tokens = logits[:, -1, :].argmax(dim=-1)
        next_tokens = next_tokens * unfinished + eos_token_id * (1 - unfinished)
        input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
        unfinished = unfinished.mul((next_tokens != eos_token_id).long())
        if unfinished.max() == 0:
            break
    return input_ids


def evaluate_prompts(config, input_ids, max_length, eos_token_id):
    model = build_partitioned_model(config)
    return greedy_decode(model, input_ids, max_length, eos_token_id)
