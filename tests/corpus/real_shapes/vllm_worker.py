"""A driver/worker split in the style of serving workers, plus a DDP loop
over a distributed sampler."""

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, DistributedSampler

_TP_GROUP = None


def broadcast_tensor_dict(tensor_dict=None, src=0, group=None):
    """The source sends its dict, the others receive it (one collective each)."""
    payload = [tensor_dict]
    dist.broadcast_object_list(payload, src=src, group=group)
    return payload[0]


class ModelWorker:
    def __init__(self, model):
        self.model = model
        self.rank = dist.get_rank()
        self.is_driver_worker = self.rank == 0

    def execute(self, request=None):
        """Driver and followers each enter one broadcast; both sides stop on an
        empty dict, which the followers learn from the broadcast itself."""
        if self.is_driver_worker:
            if request is None:
                broadcast_tensor_dict({}, src=0)
                return None
            broadcast_tensor_dict(request, src=0)
            inputs = request
        else:
            inputs = broadcast_tensor_dict(src=0)
            if not inputs:
                return None
        return self.model(inputs)

    def execute_loop(self):
        while self.execute() is not None:
            pass

    def driver_announces(self, metadata):
        """Only the driver enters the broadcast."""
        if self.is_driver_worker:
            broadcast_tensor_dict(metadata, src=0)  # expect: CSL101
        return metadata

    def followers_send_to_next_stage(self, hidden, pp_group):
        """Pipeline hand-over is point-to-point."""
        if self.rank % 2 == 0:
            dist.send(hidden, dst=self.rank + 1, group=pp_group)
        else:
            dist.recv(hidden, src=self.rank - 1, group=pp_group)
        return hidden


def train_ddp(model, dataset, optimizer, epochs):
    """A rank whose own batch gives a non-finite loss skips the gradient reduction."""
    sampler = DistributedSampler(dataset)
    loader = DataLoader(dataset, batch_size=8, sampler=sampler)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for batch in loader:
            loss = model(batch)
            if not torch.isfinite(loss):
                continue
            loss.backward()
            dist.all_reduce(loss)  # expect: CSL102
            optimizer.step()


def train_ddp_agreed_skip(model, dataset, optimizer, epochs):
    sampler = DistributedSampler(dataset, drop_last=True)
    loader = DataLoader(dataset, batch_size=8, sampler=sampler)
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        for batch in loader:
            loss = model(batch)
            bad = torch.tensor([int(not torch.isfinite(loss))])
            dist.all_reduce(bad, op=dist.ReduceOp.MAX)
            if bad.item():
                continue
            loss.backward()
            dist.all_reduce(loss)
            optimizer.step()
