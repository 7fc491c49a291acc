"""Negative (safe): sender and receiver arms of a dict broadcast issue matching collectives.

Upstream: vLLM 0.33.0, vllm/distributed/parallel_state.py (`GroupCoordinator.broadcast_tensor_dict`).
Group: the coordinator's group (tp for the driver's step inputs).
Why it looks divergent: the two arms of `rank_in_group == src` each hold
collectives, and the receivers' loop runs over metadata only the source has.
Why it is safe: the source broadcasts the metadata first; the receivers loop
over the *received* metadata, so both arms issue the same sequence -- one
object broadcast, then one tensor broadcast per non-empty tensor.
"""

import torch
import torch.distributed as dist


class Coordinator:
    def __init__(self, group, ranks, rank_in_group):
        self.device_group = group
        self.ranks = ranks
        self.rank_in_group = rank_in_group

    def broadcast_object(self, obj, src):
        box = [obj]
        dist.broadcast_object_list(box, src=self.ranks[src], group=self.device_group)
        return box[0]

    def broadcast_tensor_dict(self, tensor_dict=None, src=0):
        if self.rank_in_group == src:
            metadata = [(key, (t.dtype, t.shape)) for key, t in tensor_dict.items()]
            self.broadcast_object(metadata, src=src)
            for _, tensor in tensor_dict.items():
                if tensor.numel() == 0:
                    continue
                dist.broadcast(tensor, src=self.ranks[src], group=self.device_group)
            return tensor_dict
        metadata = self.broadcast_object(None, src=src)
        received = {}
        for key, (dtype, shape) in metadata:
            tensor = torch.empty(shape, dtype=dtype, device="cuda")
            if tensor.numel() == 0:
                received[key] = tensor
                continue
            dist.broadcast(tensor, src=self.ranks[src], group=self.device_group)
            received[key] = tensor
        return received
