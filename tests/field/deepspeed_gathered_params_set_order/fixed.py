"""Gathered-parameters context: duplicates removed through a set, then one broadcast per parameter.

Upstream: microsoft/DeepSpeed, fix commit cf5b7de3dadfdda25b1c070a051fcff92629e3ed
          ("prevent deadlocks": order the de-duplicated parameters by ds_id).
Group: the parameters' ZeRO partition group (`p.ds_process_group`).
Why ranks diverge: see buggy.py.
Variant: fixed -- the de-duplicated parameters are sorted by their ZeRO id,
which is the same on every rank, so the broadcasts pair up.
"""

import torch.distributed as dist


class GatheredParams:
    def __init__(self, params, modifier_rank=None):
        params = list(params)
        self.params = sorted(set(params), key=lambda p: p.ds_id)
        self.src_rank = modifier_rank

    def __enter__(self):
        self.params[0].all_gather(param_list=self.params)
        return self

    def __exit__(self, *exc):
        if self.src_rank is None:
            self.params[0].partition(param_list=self.params, has_been_updated=False)
            return
        handles = [
            dist.broadcast(p, self.src_rank, group=p.ds_process_group, async_op=True)
            for p in self.params
        ]
        for handle in handles:
            handle.wait()
        self.params[0].partition(param_list=self.params, has_been_updated=True)
