"""Communicators of the replica: the `self.dist` object the executor talks to.

`Distributed` fixes the mapping (rank -> tp/pp coordinates) and the method
names; `MPIDist` implements them with mpi4py object collectives,
`TorchDist` with torch.distributed (gloo on CPU, NCCL on GPUs) and
`LocalDist` is the single-rank reference (every collective is the identity).

Mapping: ``rank = pp_rank * tp_size + tp_rank``; the TP group of a rank holds
the ranks of its pipeline stage, the PP group the ranks with its tp_rank.
Collective methods are named after their group (``tp_*``, ``pp_*``, ``cp_*``,
``tp_cp_*``; unprefixed ones span the world).
"""

from __future__ import annotations

import enum
import math
import pickle
from typing import Any


class ReduceOp(enum.Enum):
    """The reduction ops of the object allreduces (SUM when none is given)."""

    SUM = "sum"
    MAX = "max"
    MIN = "min"


def _integral(value):
    """A reduced number as an int when it is one (a float reduction of ints)."""
    if isinstance(value, float) and math.isfinite(value) and value == int(value):
        return int(value)
    return value


class Distributed:
    """Rank coordinates and the collective API shared by all backends."""

    def __init__(self, rank: int, world_size: int, tp_size: int, pp_size: int, cp_size: int = 1) -> None:
        if tp_size * pp_size * cp_size != world_size:
            raise ValueError(f"tp_size*pp_size*cp_size = {tp_size * pp_size * cp_size} != world size {world_size}")
        self.rank = rank
        self.world_size = world_size
        self.tp_size = tp_size
        self.pp_size = pp_size
        self.cp_size = cp_size
        self.tp_rank = rank % tp_size
        self.pp_rank = rank // tp_size
        self.cp_rank = 0

    # group membership ----------------------------------------------------
    def tp_group_ranks(self) -> list[int]:
        return [self.pp_rank * self.tp_size + t for t in range(self.tp_size)]

    def pp_group_ranks(self) -> list[int]:
        return [p * self.tp_size + self.tp_rank for p in range(self.pp_size)]

    @property
    def is_first_pp_rank(self) -> bool:
        return self.pp_rank == 0

    @property
    def is_last_pp_rank(self) -> bool:
        return self.pp_rank == self.pp_size - 1

    @property
    def prev_pp_rank(self) -> int:
        return (self.pp_rank - 1) * self.tp_size + self.tp_rank

    @property
    def next_pp_rank(self) -> int:
        return (self.pp_rank + 1) * self.tp_size + self.tp_rank

    # CP is a single rank in the replica: TP+CP collectives are TP collectives.
    def tp_cp_allgather(self, obj: Any) -> list:
        return self.tp_allgather(obj)

    def cp_allgather(self, obj: Any) -> list:
        return [obj]

    def cp_broadcast(self, obj: Any, root: int = 0) -> Any:
        return obj

    def shutdown(self) -> None:
        """Release backend resources (process groups)."""


class LocalDist(Distributed):
    """World of one rank: the single-rank reference run."""

    def __init__(self) -> None:
        super().__init__(0, 1, 1, 1)

    def allgather(self, obj):
        return [obj]

    tp_allgather = pp_allgather = allgather

    def broadcast(self, obj, root=0):
        return obj

    tp_broadcast = pp_broadcast = broadcast

    def allreduce(self, obj, op=None):
        return obj

    tp_allreduce = allreduce

    def tp_gather(self, obj, root=0):
        return [obj]

    pp_gather = tp_gather

    def barrier(self):
        return None

    def send_object(self, obj, dest, tag=0):
        raise RuntimeError("LocalDist has no peers")

    def recv_object(self, src, tag=0):
        raise RuntimeError("LocalDist has no peers")


class MPIDist(Distributed):
    """mpi4py backend: lowercase (pickle-based) object collectives."""

    def __init__(self, tp_size: int, pp_size: int, comm=None) -> None:
        from mpi4py import MPI

        self._mpi = MPI
        self.comm = comm if comm is not None else MPI.COMM_WORLD
        super().__init__(self.comm.Get_rank(), self.comm.Get_size(), tp_size, pp_size)
        self.tp_comm = self.comm.Split(color=self.pp_rank, key=self.tp_rank)
        self.pp_comm = self.comm.Split(color=self.tp_rank, key=self.pp_rank)

    def allgather(self, obj):
        return self.comm.allgather(obj)

    def tp_allgather(self, obj):
        return self.tp_comm.allgather(obj)

    def pp_allgather(self, obj):
        return self.pp_comm.allgather(obj)

    def broadcast(self, obj, root=0):
        return self.comm.bcast(obj, root)

    def tp_broadcast(self, obj, root=0):
        return self.tp_comm.bcast(obj, root)

    def pp_broadcast(self, obj, root=0):
        return self.pp_comm.bcast(obj, root)

    def tp_gather(self, obj, root=0):
        return self.tp_comm.gather(obj, root)

    def pp_gather(self, obj, root=0):
        return self.pp_comm.gather(obj, root)

    def _mpi_op(self, op):
        return {None: self._mpi.SUM, ReduceOp.SUM: self._mpi.SUM, ReduceOp.MAX: self._mpi.MAX,
                ReduceOp.MIN: self._mpi.MIN}[op]

    def allreduce(self, obj, op=None):
        return _integral(self.comm.allreduce(obj, op=self._mpi_op(op)))

    def tp_allreduce(self, obj, op=None):
        return _integral(self.tp_comm.allreduce(obj, op=self._mpi_op(op)))

    def barrier(self):
        self.comm.Barrier()

    def send_object(self, obj, dest, tag=0):
        self.comm.send(obj, dest=dest, tag=tag)

    def recv_object(self, src, tag=0):
        return self.comm.recv(source=src, tag=tag)

    def abort(self, code: int = 1) -> None:
        self.comm.Abort(code)


class TorchDist(Distributed):
    """torch.distributed backend (gloo on CPU, NCCL with one GPU per rank).

    The default process group must already be initialised; sub-groups are
    created here (every rank creates every group, as torch requires).
    """

    def __init__(self, tp_size: int, pp_size: int) -> None:
        import torch
        import torch.distributed as tdist

        self._torch = torch
        self._tdist = tdist
        super().__init__(tdist.get_rank(), tdist.get_world_size(), tp_size, pp_size)
        self.backend = tdist.get_backend()
        self.device = torch.device("cuda", torch.cuda.current_device()) if self.backend == "nccl" else torch.device("cpu")
        self._tp_groups = {}
        self._pp_groups = {}
        for p in range(pp_size):
            ranks = [p * tp_size + t for t in range(tp_size)]
            self._tp_groups[p] = tdist.new_group(ranks) if tp_size < self.world_size else None
        for t in range(tp_size):
            ranks = [p * tp_size + t for p in range(pp_size)]
            self._pp_groups[t] = tdist.new_group(ranks) if pp_size < self.world_size else None
        self.tp_group = self._tp_groups[self.pp_rank]
        self.pp_group = self._pp_groups[self.tp_rank]

    def _allgather(self, obj, group, size):
        out = [None] * size
        self._tdist.all_gather_object(out, obj, group=group)
        return out

    def _broadcast(self, obj, root_in_group, group, ranks):
        holder = [obj]
        self._tdist.broadcast_object_list(holder, src=ranks[root_in_group], group=group)
        return holder[0]

    def allgather(self, obj):
        return self._allgather(obj, None, self.world_size)

    def tp_allgather(self, obj):
        return self._allgather(obj, self.tp_group, self.tp_size)

    def pp_allgather(self, obj):
        return self._allgather(obj, self.pp_group, self.pp_size)

    def broadcast(self, obj, root=0):
        return self._broadcast(obj, root, None, list(range(self.world_size)))

    def tp_broadcast(self, obj, root=0):
        return self._broadcast(obj, root, self.tp_group, self.tp_group_ranks())

    def pp_broadcast(self, obj, root=0):
        return self._broadcast(obj, root, self.pp_group, self.pp_group_ranks())

    def tp_gather(self, obj, root=0):
        return self.tp_allgather(obj)

    def pp_gather(self, obj, root=0):
        return self.pp_allgather(obj)

    def _reduce(self, obj, op, group):
        # one dtype on every rank, whatever each passes (an int, or a float identity such as -inf)
        tensor = self._torch.as_tensor(obj, dtype=self._torch.float64, device=self.device)
        torch_op = {None: self._tdist.ReduceOp.SUM, ReduceOp.SUM: self._tdist.ReduceOp.SUM,
                    ReduceOp.MAX: self._tdist.ReduceOp.MAX, ReduceOp.MIN: self._tdist.ReduceOp.MIN}[op]
        self._tdist.all_reduce(tensor, op=torch_op, group=group)
        return [_integral(v) for v in tensor.tolist()] if tensor.dim() else _integral(tensor.item())

    def allreduce(self, obj, op=None):
        return self._reduce(obj, op, None)

    def tp_allreduce(self, obj, op=None):
        return self._reduce(obj, op, self.tp_group)

    def barrier(self):
        self._tdist.barrier()

    def send_object(self, obj, dest, tag=0):
        payload = self._torch.frombuffer(bytearray(pickle.dumps(obj)), dtype=self._torch.uint8).to(self.device)
        size = self._torch.tensor([payload.numel()], dtype=self._torch.long, device=self.device)
        self._tdist.send(size, dst=dest, tag=tag)
        self._tdist.send(payload, dst=dest, tag=tag)

    def recv_object(self, src, tag=0):
        size = self._torch.zeros(1, dtype=self._torch.long, device=self.device)
        self._tdist.recv(size, src=src, tag=tag)
        payload = self._torch.empty(int(size.item()), dtype=self._torch.uint8, device=self.device)
        self._tdist.recv(payload, src=src, tag=tag)
        return pickle.loads(payload.cpu().numpy().tobytes())

    def shutdown(self) -> None:
        if self._tdist.is_initialized():
            self._tdist.destroy_process_group()
