"""Tensor-parallel communication helpers in the style of serving engines.

Most are the safe wrappers every engine has (a size-1 bypass, an
initialisation check, a rooted gather); two gate a broadcast on the rank.
"""

import torch
import torch.distributed as dist

_TP_GROUP = None


def tp_world_size():
    return dist.get_world_size(group=_TP_GROUP)


def tp_all_reduce(tensor):
    """Sum over the TP group; a single-rank group needs no communication."""
    if tp_world_size() == 1:
        return tensor
    dist.all_reduce(tensor, group=_TP_GROUP)
    return tensor


def tp_all_gather(tensor, dim=-1):
    """Concatenate the TP shards along `dim`."""
    if not dist.is_initialized():
        return tensor
    world = tp_world_size()
    if dim < 0:
        dim += tensor.dim()
    output = torch.empty((world,) + tuple(tensor.shape), dtype=tensor.dtype)
    dist.all_gather_into_tensor(output, tensor, group=_TP_GROUP)
    return output.movedim(0, dim).flatten(dim, dim + 1)


def export_friendly_all_reduce(tensor):
    """Skip communication while tracing for export (a process-wide mode)."""
    if torch.onnx.is_in_onnx_export():
        return tensor
    dist.all_reduce(tensor, group=_TP_GROUP)
    return tensor


def gather_on_first(tensor):
    """Rooted gather: the rank only chooses the receive buffer."""
    rank = dist.get_rank(group=_TP_GROUP)
    buffers = [torch.empty_like(tensor) for _ in range(tp_world_size())] if rank == 0 else None
    dist.gather(tensor, gather_list=buffers, dst=0, group=_TP_GROUP)
    if rank != 0:
        return None
    return torch.cat(buffers, dim=-1)


def broadcast_config_from_first(config):
    """Only the first rank enters the broadcast: the others never post it."""
    payload = [config]
    if dist.get_rank() == 0:
        dist.broadcast_object_list(payload, src=0)  # expect: CSL101
    return payload[0]


def broadcast_config(config):
    """Every rank enters; only the source's payload matters."""
    payload = [config] if dist.get_rank() == 0 else [None]
    dist.broadcast_object_list(payload, src=0)
    return payload[0]


def log_on_first(message):
    if dist.get_rank() == 0:
        print(f"[rank0] {message}")


def select_tokens(logits, index):
    """`torch.gather` and `Tensor.gather` index a tensor; they are not collectives."""
    if dist.get_rank() == 0:
        picked = torch.gather(logits, 1, index)
    else:
        picked = logits.gather(1, index)
    return picked


def exchange_with_peer(tensor):
    """Point-to-point pairs are matched by the peers, not by the whole group."""
    if dist.get_rank() % 2 == 0:
        dist.send(tensor, dst=dist.get_rank() + 1)
    else:
        dist.recv(tensor, src=dist.get_rank() - 1)
    return tensor


def reduce_either_way(left, right):
    """Both branches issue the same collective on the same group."""
    if dist.get_rank() % 2 == 0:
        dist.all_reduce(left)
        return left
    else:
        dist.all_reduce(right)
        return right


def all_reduce_in(tensor, group):
    """The group is chosen by the caller."""
    dist.all_reduce(tensor, group=group)
    return tensor


def reduce_on_group(tensor, group):
    return all_reduce_in(tensor, group)


def reduce_on_group_leader(tensor, group):
    """Only the group leader calls the collective wrapper."""
    if dist.get_rank(group=group) == 0:
        all_reduce_in(tensor, group)  # expect: CSL101
    return tensor


def overlap_reduction(tensor, compute):
    """Every rank starts the reduction; waiting on the handle is local."""
    work = dist.all_reduce(tensor, async_op=True)
    result = compute()
    if dist.get_rank() == 0:
        work.wait()
    else:
        work.wait()
        result = result * 2
    return result
