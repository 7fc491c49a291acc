"""Communication wrappers used by the worker."""

import torch
import torch.distributed as dist


def dp_sync(tensor, group=None):
    dist.all_reduce(tensor, group=group)
    return tensor


def gather_objects(obj, group=None):
    world = dist.get_world_size(group=group)
    out = [None] * world
    dist.all_gather_object(out, obj, group=group)
    return out


def maybe_sync_leader_only(tensor, enabled):
    """Reduces only when the caller says so."""
    if enabled:
        dist.all_reduce(tensor)  # expect: CSL101
    return tensor


def maybe_sync_when_parallel(tensor, enabled):
    if enabled:
        dist.all_reduce(tensor)
    return tensor


def coordinate_tokens(num_tokens, group=None):
    counts = torch.tensor([num_tokens])
    dist.all_reduce(counts, op=dist.ReduceOp.MAX, group=group)
    return int(counts.item())


def broadcast_pyobj(data, rank, group=None, src=0):
    """The source serialises and sends the size then the bytes; the others
    receive the same two broadcasts (and return early on the agreed size)."""
    import pickle

    if rank == src:
        if not data:
            size = torch.tensor([0], dtype=torch.long)
            dist.broadcast(size, src=src, group=group)
            return []
        payload = torch.frombuffer(bytearray(pickle.dumps(data)), dtype=torch.uint8)
        size = torch.tensor([payload.numel()], dtype=torch.long)
        dist.broadcast(size, src=src, group=group)
        dist.broadcast(payload, src=src, group=group)
        return data
    size = torch.tensor([0], dtype=torch.long)
    dist.broadcast(size, src=src, group=group)
    if size.item() == 0:
        return []
    payload = torch.empty(int(size.item()), dtype=torch.uint8)
    dist.broadcast(payload, src=src, group=group)
    return pickle.loads(payload.numpy().tobytes())
