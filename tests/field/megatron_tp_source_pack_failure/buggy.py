"""Only the tensor-parallel source rank reads and packs the batch; a failure there strands its peers.

Upstream: NVIDIA/Megatron-LM, fix commit 2985de848efb0db57a1b63f6018fcc44967071ba
          ("fix(multimodal): propagate TP source pack failures instead of hanging peers").
Group: tp (the batch is broadcast from the TP source rank over the TP group).
Why ranks diverge: fetching a sample (a dataset or worker error) and packing
it (a sequence-length mismatch, an over-length reject) can raise on the source
rank alone.  The source leaves through the exception before the header
broadcast, while its TP peers already wait in that broadcast until the NCCL
timeout.
Variant: buggy -- the source-only block can raise between collectives.
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
    if mpu.get_tensor_model_parallel_rank() == 0:
        sample = next(data_iterator)
        tokens = pack_sequences(sample, max_len).cuda()
        header = torch.tensor([tokens.numel()], dtype=torch.long, device="cuda")
    else:
        header = torch.empty(1, dtype=torch.long, device="cuda")
    dist.broadcast(header, src, group=group)  # expect: CSL104
    if mpu.get_tensor_model_parallel_rank() != 0:
        tokens = torch.empty(int(header.item()), dtype=torch.long, device="cuda")
    dist.broadcast(tokens, src, group=group)
    return tokens
