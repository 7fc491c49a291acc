"""Generation under context parallelism: each rank samples its own next tokens.

Upstream: NVIDIA/Megatron-LM, fix commit 975a0c3b4c85827a4383d1a37db2961662f10150
          ("fix(cp): CP=2 silent-hang fixes ...", the text_generation_controller part:
          broadcast the sampled tokens from model-parallel rank 0).
Group: the model-parallel group (TP x CP); the forward gathers over the CP group.
Why ranks diverge: under CP the logits after the pipeline broadcast are not
bit-identical on the CP peers (the sequence-dimension sums run in a different
order), so each rank samples different tokens, finishes different requests,
and runs a different number of decode steps -- each with the forward's CP
all-gather.
Variant: buggy -- the loop continues on this rank's own sampled tokens.
"""

import torch
import torch.distributed as dist


class CPDecoder:
    def __init__(self, model, cp_group, eos_id):
        self.model = model
        self.cp_group = cp_group
        self.eos_id = eos_id

    def forward(self, tokens):
        local = self.model(tokens)
        world = dist.get_world_size(self.cp_group)
        full = torch.empty((world * local.shape[0], *local.shape[1:]), dtype=local.dtype, device=local.device)
        dist.all_gather_into_tensor(full, local, group=self.cp_group)
        return full[:, -1, :]

    def decode(self, requests, max_new_tokens):
        active = list(requests)
        steps = 0
        while active and steps < max_new_tokens:
            logits = self.forward(torch.stack([r.tokens for r in active]))  # expect: CSL103
            sampled = torch.multinomial(torch.softmax(logits.float(), dim=-1), 1).squeeze(-1)
            for req, token in zip(active, sampled.tolist()):
                req.append(token)
            active = [r for r, t in zip(active, sampled.tolist()) if t != self.eos_id]
            steps += 1
        return requests
