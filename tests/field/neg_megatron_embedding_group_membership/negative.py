"""Negative (safe): a group-membership test and stage predicates in front of the embedding-group all-reduce.

Upstream: megatron-core 0.16.1, megatron/core/distributed/finalize_model_grads.py
          (`_allreduce_word_embedding_grads`).
Group: the embedding group (the first and last pipeline stages of one model replica).
Why it looks divergent: the all-reduce sits under `get_rank() in
get_process_group_ranks(embd_group)`, and the stage tests pick which model
chunk holds the weight.
Why it is safe: membership in the group's rank list is the same answer for
every member of that group (non-members never take part in its collectives),
and the stage tests only choose which local chunk to read.  The remaining
early return (a frozen embedding has no grad) is configuration, the same on
every member.
"""

import torch.distributed as dist

from megatron.core import parallel_state


def allreduce_word_embedding_grads(model_chunks, embd_group):
    if dist.get_world_size(embd_group) > 1 and dist.get_rank() in dist.get_process_group_ranks(embd_group):
        if parallel_state.is_pipeline_first_stage(ignore_virtual=True):
            module = model_chunks[0]
        elif parallel_state.is_pipeline_last_stage(ignore_virtual=True):
            module = model_chunks[-1]
        else:
            module = model_chunks[0]
        weight = module.shared_embedding_or_output_weight()
        grad = weight.main_grad
        if grad is None:
            return
        dist.all_reduce(grad, group=embd_group)
