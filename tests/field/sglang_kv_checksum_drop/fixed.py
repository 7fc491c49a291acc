"""PD decode: requests whose transferred KV fails its checksum are dropped rank-locally.

Upstream: sgl-project/sglang PR #39729 ("[PD] Make the KV checksum flag safe to enable",
          follow-up to PR #39500 "[PD] Add optional KV transfer checksums"); the agreed
          drop set is in sglang 0.5.23, srt/disaggregation/decode.py.
Group: the attention tensor-parallel group (the decode forward all-reduces over it).
Why ranks diverge: see buggy.py.
Variant: fixed -- the per-request mismatch flags are MAX-all-reduced over the
attention TP CPU group first, so every rank drops the same requests.
"""

import torch
import torch.distributed as dist


class DecodeStep:
    def __init__(self, model, attn_tp_group, attn_tp_cpu_group):
        self.model = model
        self.attn_tp_group = attn_tp_group
        self.attn_tp_cpu_group = attn_tp_cpu_group

    def abort(self, req, reason):
        req.finished_reason = reason

    def verify_transferred(self, reqs):
        mismatched = torch.tensor(
            [int(req.kv_digest() != req.expected_kv_checksum) for req in reqs], dtype=torch.int32
        )
        dist.all_reduce(mismatched, op=dist.ReduceOp.MAX, group=self.attn_tp_cpu_group)
        kept = []
        for req, bad in zip(reqs, mismatched.tolist()):
            if bad:
                self.abort(req, "KV checksum mismatch")
            else:
                kept.append(req)
        return kept

    def forward(self, reqs):
        hidden = self.model(torch.stack([r.last_token for r in reqs]))
        dist.all_reduce(hidden, group=self.attn_tp_group)
        return hidden

    def step(self, transferred):
        reqs = self.verify_transferred(transferred)
        if not reqs:
            return None
        return self.forward(reqs)
