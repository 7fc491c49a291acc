"""Training and evaluation loops over rank-sharded data (torch.distributed).

Sharding a dataset by rank gives ranks different numbers of batches; a
reduction per batch then runs a different number of times on each rank.
"""

import random
import zlib

import torch
import torch.distributed as dist


def shard(samples):
    return samples[dist.get_rank()::dist.get_world_size()]


def train_epoch(model, samples):
    """One gradient reduction per local batch: uneven shards hang the last step."""
    for batch in shard(samples):
        loss = model(batch)
        loss.backward()
        for param in model.parameters():
            dist.all_reduce(param.grad)  # expect: CSL103


def train_epoch_even(model, samples):
    """The step count is derived from the global sample count."""
    steps = len(samples) // dist.get_world_size()
    local = shard(samples)
    for step in range(steps):
        loss = model(local[step])
        loss.backward()
        for param in model.parameters():
            dist.all_reduce(param.grad)


def train_epoch_agreed(model, samples):
    """Ranks agree on the smallest shard before looping."""
    local = shard(samples)
    count = torch.tensor([len(local)])
    dist.all_reduce(count, op=dist.ReduceOp.MIN)
    for step in range(int(count.item())):
        loss = model(local[step])
        loss.backward()
        dist.all_reduce(loss)


def evaluate(model, samples):
    """Stops at the end of the local shard, skipping the remaining reductions."""
    batches = iter(shard(samples))
    total = torch.zeros(1)
    while True:
        batch = next(batches, None)
        if batch is None:
            break
        total += model(batch)
        dist.all_reduce(total)  # expect: CSL102
    return total


def train_with_step_dropping(model, batches, drop_probability):
    """A randomly skipped step skips its reduction on this rank only."""
    for batch in batches:
        if random.random() < drop_probability:
            continue
        loss = model(batch)
        dist.all_reduce(loss)  # expect: CSL102


def sync_params_by_owner(params):
    """Each rank loops over the parameters it owns: a different key set per rank."""
    world = dist.get_world_size()
    owned = {name: p for name, p in params.items() if zlib.crc32(name.encode()) % world == dist.get_rank()}
    for name, tensor in owned.items():
        dist.broadcast(tensor, src=dist.get_rank())  # expect: CSL103


def sync_params_in_name_order(params):
    """Every rank walks the same sorted names; the owner only picks the source."""
    world = dist.get_world_size()
    for name in sorted(params):
        dist.broadcast(params[name], src=zlib.crc32(name.encode()) % world)


def reduce_local_buffers(buffers):
    """A comprehension issuing one reduction per element of a per-rank list."""
    local = [b for b in buffers if b.device.index == torch.cuda.current_device()]
    return [dist.all_reduce(t) for t in local]  # expect: CSL103


def reduce_all_buffers(buffers):
    return [dist.all_reduce(t) for t in buffers]
