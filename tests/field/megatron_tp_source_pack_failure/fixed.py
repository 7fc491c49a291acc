"""Only the tensor-parallel source rank reads and packs the batch; a failure there strands its peers.

Upstream: NVIDIA/Megatron-LM, fix commit 2985de848efb0db57a1b63f6018fcc44967071ba
          ("fix(multimodal): propagate TP source pack failures instead of hanging peers").
Group: tp (the batch is broadcast from the TP source rank over the TP group).
Why ranks diverge: see buggy.py.
Variant: fixed -- the source catches its own failure and broadcasts a status
header first; every rank then raises together, or every rank receives the
payload.
"""

import torch
import torch.distributed as dist

from megatron.core import mpu


def pack_sequences(sample, max_len):
    lengths = sample["seq_lens"]
    if sum(lengths) != sample["tokens"].numel():
        raise ValueError("sequence lengths do not add up to the token count")
    if sample["tokens"].numel() > max_len:
        raise ValueError("packed sample longer than the sequence length")
    return sample["tokens"].view(-1)


def get_packed_batch(data_iterator, max_len):
    src = mpu.get_tensor_model_parallel_src_rank()
    group = mpu.get_tensor_model_parallel_group()
    is_src = mpu.get_tensor_model_parallel_rank() == 0
    failure = None
    numel = 0
    if is_src:
        try:
            sample = next(data_iterator)
            tokens = pack_sequences(sample, max_len).cuda()
            numel = tokens.numel()
        except Exception as exc:  # reported to every rank below
            failure = exc
    header = torch.tensor([int(failure is not None), numel], dtype=torch.long, device="cuda")
    dist.broadcast(header, src, group=group)
    if header[0].item():
        if failure is not None:
            raise failure
        raise RuntimeError("the tensor-parallel source rank failed to build the batch")
    if not is_src:
        tokens = torch.empty(int(header[1].item()), dtype=torch.long, device="cuda")
    dist.broadcast(tokens, src, group=group)
    return tokens
