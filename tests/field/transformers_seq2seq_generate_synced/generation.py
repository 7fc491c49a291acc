"""Generation loop shared by both variants: `synced_gpus` keeps finished ranks forwarding."""

import torch
import torch.distributed as dist


def generate(model, input_ids, max_length, eos_token_id, synced_gpus=False):
    unfinished = torch.ones(input_ids.shape[0], dtype=torch.long, device=input_ids.device)
    this_rank_finished = False
    while True:
        if synced_gpus:
            still_running = torch.tensor(0.0 if this_rank_finished else 1.0, device=input_ids.device)
            dist.all_reduce(still_running)
            if still_running.item() == 0.0:
                break
        elif this_rank_finished:
            break
        logits = model(input_ids).logits
        if synced_gpus and this_rank_finished:
            continue
        next_tokens = logits[:, -1, :].argmax(dim=-1)
        next_tokens = next_tokens * unfinished + eos_token_id * (1 - unfinished)
        input_ids = torch.cat([input_ids, next_tokens[:, None]], dim=-1)
        unfinished = unfinished.mul((next_tokens != eos_token_id).long())
        if unfinished.max() == 0 or input_ids.shape[-1] >= max_length:
            this_rank_finished = True
    return input_ids
