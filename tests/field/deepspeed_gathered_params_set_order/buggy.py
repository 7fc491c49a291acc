"""Gathered-parameters context: duplicates removed through a set, then one broadcast per parameter.

Upstream: microsoft/DeepSpeed, fix commit cf5b7de3dadfdda25b1c070a051fcff92629e3ed
          ("prevent deadlocks": order the de-duplicated parameters by ds_id).
Group: the parameters' ZeRO partition group (`p.ds_process_group`).
Why ranks diverge: `set()` of parameters iterates in an order derived from
object identities, which differ between processes.  On leaving the context
every rank issues one broadcast per parameter in its own order, so rank A's
first broadcast carries parameter x while rank B's carries parameter y: the
collectives pair up wrongly and the job deadlocks or corrupts weights.
Variant: buggy -- the broadcast loop follows a per-process set order.
"""

import torch.distributed as dist


class GatheredParams:
    def __init__(self, params, modifier_rank=None):
        params = list(params)
        self.params = list(set(params))
        self.src_rank = modifier_rank

    def __enter__(self):
        self.params[0].all_gather(param_list=self.params)
        return self

    def __exit__(self, *exc):
        if self.src_rank is None:
            self.params[0].partition(param_list=self.params, has_been_updated=False)
            return
        handles = [
            dist.broadcast(p, self.src_rank, group=p.ds_process_group, async_op=True)  # expect: CSL103
            for p in self.params
        ]
        for handle in handles:
            handle.wait()
        self.params[0].partition(param_list=self.params, has_been_updated=True)
