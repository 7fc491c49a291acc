"""Greedy decoding under ZeRO-3: a rank whose sequences are finished stops forwarding.

Upstream: huggingface/transformers PR #10753 ("[DeepSpeed] ZeRO Stage 3", which gave the
          generation loops `synced_gpus`); the hang is microsoft/DeepSpeed issue #860
          ("zero3 hangs in inference").
Group: world (the ZeRO-3 partition group: every forward all-gathers the layer weights).
Why ranks diverge: see buggy.py.
Variant: fixed -- with synced ranks, a finished rank keeps running dummy
forwards; the loop ends when an all-reduce shows that every rank is done.
"""

import deepspeed
import torch
import torch.distributed as dist
from transformers import AutoModelForCausalLM


def build_partitioned_model(config):
    with deepspeed.zero.Init():
        return AutoModelForCausalLM.from_config(config)


def all_ranks_finished(this_rank_finished, device):
    still_running = torch.tensor(0.0 if this_rank_finished else 1.0, device=device)
    dist.all_reduce(still_running, op=dist.ReduceOp.SUM)
    return still_running.item() == 0.0


def greedy_decode(model, input_ids, max_length, eos_token_id):
    unfinished = torch.ones(input_ids.shape[0], dtype=torch.long, device=input_ids.device)
    this_rank_finished = False
    while not all_ranks_finished(this_rank_finished, input_ids.device):
        logits = model(input_ids).logits
        if this_rank_finished:
            continue
        next_tokens = logits[:, -1, :].argmax(dim=-1)
        next_tokens = next_tokens * unfinished + eos_token_id * (1 - unfinished)
        input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
        unfinished = unfinished.mul((next_tokens != eos_token_id).long())
        if unfinished.max() == 0 or input_ids.shape[-1] >= max_length:
            this_rank_finished = True
    return input_ids


def evaluate_prompts(config, input_ids, max_length, eos_token_id):
    model = build_partitioned_model(config)
    return greedy_decode(model, input_ids, max_length, eos_token_id)
