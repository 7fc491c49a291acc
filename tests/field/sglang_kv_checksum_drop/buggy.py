"""PD decode: requests whose transferred KV fails its checksum are dropped rank-locally.

Upstream: sgl-project/sglang PR #39729 ("[PD] Make the KV checksum flag safe to enable",
          follow-up to PR #39500 "[PD] Add optional KV transfer checksums"); the agreed
          drop set is in sglang 0.5.23, srt/disaggregation/decode.py.
Group: the attention tensor-parallel group (the decode forward all-reduces over it).
Why ranks diverge: each TP rank received and verifies its own slice of the
KV cache, so corruption is per rank.  A rank that drops a request (or all of
them) runs a different batch -- or none -- and the TP peers hang in the next
forward's all-reduce.
Variant: buggy -- the drop decision is this rank's own checksum comparison.
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
        kept = []
        for req in reqs:
            if req.kv_digest() != req.expected_kv_checksum:
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
        return self.forward(reqs)  # expect: CSL102
