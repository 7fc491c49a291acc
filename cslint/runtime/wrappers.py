"""Communicator wrappers that enter every collective in the group's ledger.

- `DistributedProxy`: a TensorRT-LLM-style ``Distributed`` object
  (``tp_allgather``, ``pp_broadcast``, ``allreduce``, ``barrier``...); the group
  comes from the method's prefix (``tp_``, ``pp_``, ``cp_``, ``tp_cp_``; none =
  world) and is labelled with its member ranks where the object tells them.
- `MPICommProxy`: an mpi4py ``Comm``.
- `TorchDistributedProxy`: the ``torch.distributed`` module.

The ledger (`cslint.runtime.ledger`) decides which calls are checked.  A
checked object collective sends ``(stamp, payload)`` in the message it sends
anyway; a checked reduction or tensor collective first exchanges the stamps
in one small allgather; a barrier is that allgather.  Everything else passes
through untouched.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from ..presets.tensorrt_llm import GROUP_ALLGATHER
from .core import Sanitizer
from .ledger import LAZY, RECEIVES, SENDS, SYMMETRIC, make_stamp

_PREFIXES = (("tp_cp_", "tp_cp"), ("tp_", "tp"), ("pp_", "pp"), ("cp_", "cp"), ("dp_", "dp"), ("ep_", "ep"))
_M64 = (1 << 64) - 1


def _group_of(method: str) -> str:
    for prefix, group in _PREFIXES:
        if method.startswith(prefix):
            return group
    return "world"


def _rooted_role(is_root: bool, root_receives: bool) -> int:
    """A broadcast or scatter root only sends; a gather root is the one that receives."""
    if root_receives:
        return RECEIVES if is_root else SENDS
    return SENDS if is_root else RECEIVES


def _exchange_check(ledger, exchange: Callable) -> None:
    """A check through one object allgather of the stamps (for collectives that cannot carry one)."""
    ledger.unwrap(exchange((ledger.stamp(), None)), True, True)


class DistributedProxy:
    """Sanitized view of a ``Distributed``-like object (same methods, same results)."""

    _ALLGATHER = tuple(method for _group, method in GROUP_ALLGATHER)  # the preset's mapping
    _BROADCAST = ("broadcast", "tp_broadcast", "pp_broadcast", "cp_broadcast", "tp_cp_broadcast")
    _GATHER = ("gather", "tp_gather", "pp_gather")
    _BARRIER = ("barrier", "tp_barrier", "pp_barrier")
    _LAZY = ("allreduce", "tp_allreduce", "pp_allreduce", "tp_allgather_int64", "reduce_scatter", "tp_reduce_scatter",
             "alltoall", "tp_alltoall")

    def __init__(self, inner: Any, sanitizer: Sanitizer) -> None:
        object.__setattr__(self, "_inner", inner)
        object.__setattr__(self, "_sanitizer", sanitizer)
        object.__setattr__(self, "_positions", {})
        object.__setattr__(self, "_labels", self._group_labels(inner, sanitizer, self._positions))
        for names, factory in ((self._ALLGATHER, self._make_allgather), (self._BROADCAST, self._make_rooted),
                               (self._GATHER, self._make_rooted), (self._BARRIER, self._make_barrier),
                               (self._LAZY, self._make_lazy)):
            for name in names:
                if callable(getattr(inner, name, None)):
                    object.__setattr__(self, name, factory(name))

    @staticmethod
    def _group_labels(inner: Any, sanitizer: Sanitizer, positions: dict) -> dict[str, str]:
        """Label groups with their members (``tp[0,1]``) so reports never mix two TP groups."""
        labels = {}
        rank = getattr(inner, "rank", None)
        for group in ("tp", "pp", "cp", "tp_cp", "dp", "world"):
            members = None
            getter = getattr(inner, f"{group}_group_ranks", None)
            if callable(getter):
                try:
                    members = tuple(int(r) for r in getter())
                except Exception:  # noqa: BLE001 - the label is cosmetic
                    members = None
            elif group == "world" and isinstance(getattr(inner, "world_size", None), int):
                members = tuple(range(inner.world_size))
            label = f"{group}[{','.join(map(str, members))}]" if members is not None else group
            labels[group] = label
            if members is not None:
                sanitizer.groups[label] = members
            # this rank's position in the group: what a rooted collective's root argument is compared with
            position = getattr(inner, f"{group}_rank", None) if group != "world" else rank
            if not isinstance(position, int) and members is not None and rank in members:
                position = members.index(rank)
            if isinstance(position, int):
                positions[group] = position
        return labels

    # attribute access falls through to the wrapped object (rank, tp_size...)
    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._inner, name, value)

    @property
    def sanitizer(self) -> Sanitizer:
        return self._sanitizer

    def close(self) -> None:
        self._sanitizer.close()
        inner_close = getattr(self._inner, "close", None)
        if callable(inner_close):
            inner_close()

    def _ledger(self, name: str):
        group = _group_of(name)
        return self._sanitizer.ledger(self._labels.get(group, group))

    def _exchange(self, name: str):
        """The group's own object allgather, which carries the stamps of collectives that cannot."""
        group = _group_of(name)
        for candidate in (dict(GROUP_ALLGATHER).get(group, "allgather"), "allgather"):
            method = getattr(self._inner, candidate, None)
            if callable(method):
                return method
        return None

    def _make_allgather(self, name: str) -> Callable:
        return self._ledger(name).allgather(getattr(self._inner, name), name)

    def _make_rooted(self, name: str) -> Callable:
        """broadcast / gather: the ranks that receive check; the others are checked at the next allgather."""
        inner = getattr(self._inner, name)
        ledger = self._ledger(name)
        is_gather = name in self._GATHER
        position = self._positions.get(_group_of(name))

        def rooted(obj, root=0, *args, **kwargs):
            checked = ledger.enter(name, obj, _rooted_role(position == root, is_gather))
            try:
                received = inner((ledger.stamp(), obj) if checked else obj, root, *args, **kwargs)
                if is_gather:
                    return ledger.unwrap(received, checked, False) if isinstance(received, list) else received
                return ledger.unwrap([received], checked, False)[0]
            finally:
                ledger.leave()

        rooted.__name__ = name
        return rooted

    def _make_barrier(self, name: str) -> Callable:
        """A barrier becomes the group's allgather of the stamps: it synchronises and always checks."""
        inner = getattr(self._inner, name)
        ledger = self._ledger(name)
        exchange = self._exchange(name)

        def barrier(*args, **kwargs):
            ledger.enter(name, None, SYMMETRIC)
            try:
                if exchange is None or args or kwargs:
                    return inner(*args, **kwargs)
                _exchange_check(ledger, exchange)
                return None
            finally:
                ledger.leave()

        barrier.__name__ = name
        return barrier

    def _make_lazy(self, name: str) -> Callable:
        exchange = self._exchange(name)
        check = (lambda ledger: _exchange_check(ledger, exchange)) if exchange is not None else None
        return self._ledger(name).unstamped(getattr(self._inner, name), name, check)


class _SanitizedProxy:
    """What the MPI and torch proxies share: attributes come from the wrapped
    object, and the methods named in ``_CHECKED`` come back wrapped (once per
    name) by ``_make_checked``."""

    _CHECKED: tuple = ()
    _target: Any
    _sanitizer: Sanitizer
    _checked_cache: dict

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_target", "_sanitizer", "_checked_cache"):
            raise AttributeError(name)  # not set up yet (copy, pickle): never recurse
        attr = getattr(self._target, name)
        if name in self._CHECKED:
            checked = self._checked_cache.get(name)
            if checked is None:
                checked = self._checked_cache[name] = self._make_checked(name, attr)
            return checked
        return attr

    def _make_checked(self, name: str, method: Callable) -> Callable:
        raise NotImplementedError

    @property
    def sanitizer(self) -> Sanitizer:
        return self._sanitizer

    def close(self) -> None:
        self._sanitizer.close()


class MPICommProxy(_SanitizedProxy):
    """Sanitized view of an mpi4py communicator."""

    _CHECKED = ("Allgather", "Allgatherv", "Allreduce", "Alltoall", "Alltoallv", "Bcast", "Gather", "Gatherv",
                "Reduce", "Reduce_scatter", "Reduce_scatter_block", "Scatter", "Scatterv", "Scan", "Exscan",
                "allreduce", "reduce", "scan", "exscan")

    def __init__(self, comm: Any, sanitizer: Sanitizer, group: str = "") -> None:
        self._target = self._comm = comm
        self._sanitizer = sanitizer
        self._group = group or comm.Get_name() or f"comm{comm.Get_size()}"
        self._rank = comm.Get_rank()
        self._ledger = sanitizer.ledger(self._group)
        self._checked_cache: dict[str, Callable] = {}
        self.allgather = self._ledger.allgather(comm.allgather, "allgather")

    def Abort(self, errorcode: int = 1):
        return self._comm.Abort(errorcode)

    # communicators derived from a sanitized one are sanitized too; members of
    # one derived communicator pass the same color, hence get the same label
    def Split(self, color: int = 0, key: int = 0):
        return MPICommProxy(self._comm.Split(color, key), self._sanitizer, group=f"{self._group}/split{color}")

    def Dup(self, *args):
        return MPICommProxy(self._comm.Dup(*args), self._sanitizer, group=f"{self._group}/dup")

    def alltoall(self, sendobj):
        ledger = self._ledger
        checked = ledger.enter("alltoall", sendobj, SYMMETRIC)
        try:
            if checked:
                stamp = ledger.stamp()
                sendobj = [(stamp, item) for item in sendobj]
            return ledger.unwrap(self._comm.alltoall(sendobj), checked, True)
        finally:
            ledger.leave()

    def bcast(self, obj, root: int = 0):
        ledger = self._ledger
        checked = ledger.enter("bcast", obj, _rooted_role(self._rank == root, False))
        try:
            return ledger.unwrap([self._comm.bcast((ledger.stamp(), obj) if checked else obj, root)], checked,
                                 False)[0]
        finally:
            ledger.leave()

    def gather(self, sendobj, root: int = 0):
        ledger = self._ledger
        checked = ledger.enter("gather", sendobj, _rooted_role(self._rank == root, True))
        try:
            received = self._comm.gather((ledger.stamp(), sendobj) if checked else sendobj, root)
            return ledger.unwrap(received, checked, False) if received is not None else None
        finally:
            ledger.leave()

    def scatter(self, sendobj, root: int = 0):
        ledger = self._ledger
        checked = ledger.enter("scatter", sendobj, _rooted_role(self._rank == root, False))
        try:
            items = sendobj
            if checked and sendobj is not None:
                stamp = ledger.stamp()
                items = [(stamp, item) for item in sendobj]
            return ledger.unwrap([self._comm.scatter(items, root)], checked, False)[0]
        finally:
            ledger.leave()

    def barrier(self):
        ledger = self._ledger
        ledger.enter("barrier", None, SYMMETRIC)
        try:
            _exchange_check(ledger, self._comm.allgather)
        finally:
            ledger.leave()

    Barrier = barrier

    def _make_checked(self, name: str, method: Callable) -> Callable:
        exchange = self._comm.allgather
        return self._ledger.unstamped(method, name, lambda ledger: _exchange_check(ledger, exchange))


class TorchDistributedProxy(_SanitizedProxy):
    """Sanitized view of the ``torch.distributed`` module."""

    _CHECKED = ("all_reduce", "all_gather", "all_gather_into_tensor", "reduce_scatter", "reduce_scatter_tensor",
                "broadcast", "reduce", "gather", "scatter", "all_to_all", "all_to_all_single")

    def __init__(self, tdist: Any, sanitizer: Sanitizer) -> None:
        import torch

        self._torch = torch
        self._target = self._tdist = tdist
        self._sanitizer = sanitizer
        self._rank: int | None = None
        self._ledgers: dict[int, Any] = {}  # id(group) -> ledger (the group objects live as long as the job)
        self._checked_cache: dict[str, Callable] = {}

    def _ledger_for(self, group):
        ledger = self._ledgers.get(id(group))
        if ledger is None:
            ledger = self._ledgers[id(group)] = self._sanitizer.ledger(self._group_name(group))
        return ledger

    def _group_name(self, group) -> str:
        if group is None:
            return "world"
        try:
            ranks = self._tdist.get_process_group_ranks(group)
        except Exception:  # noqa: BLE001 - any group object we cannot name
            return f"group{id(group)}"
        name = "ranks[" + ",".join(map(str, ranks)) + "]"
        self._sanitizer.groups[name] = tuple(ranks)
        return name

    def _is_rank(self, rank) -> bool:
        if self._rank is None:
            self._rank = self._tdist.get_rank()
        return rank == self._rank

    def all_gather_object(self, object_list, obj, group=None):
        ledger = self._ledger_for(group)
        checked = ledger.enter("all_gather_object", obj, SYMMETRIC)
        try:
            tmp = [None] * len(object_list)
            self._tdist.all_gather_object(tmp, (ledger.stamp(), obj) if checked else obj, group=group)
            object_list[:] = ledger.unwrap(tmp, checked, True)
        finally:
            ledger.leave()

    def broadcast_object_list(self, object_list, src=0, group=None, device=None):
        ledger = self._ledger_for(group)
        checked = ledger.enter("broadcast_object_list", object_list, _rooted_role(self._is_rank(src), False))
        try:
            holder = [(ledger.stamp(), list(object_list)) if checked else list(object_list)]
            self._tdist.broadcast_object_list(holder, src=src, group=group, device=device)
            object_list[:] = ledger.unwrap(holder, checked, False)[0]
        finally:
            ledger.leave()

    def gather_object(self, obj, object_gather_list=None, dst=0, group=None):
        ledger = self._ledger_for(group)
        checked = ledger.enter("gather_object", obj, _rooted_role(self._is_rank(dst), True))
        try:
            tmp = None if object_gather_list is None else [None] * len(object_gather_list)
            self._tdist.gather_object((ledger.stamp(), obj) if checked else obj, tmp, dst=dst, group=group)
            if object_gather_list is not None:
                object_gather_list[:] = ledger.unwrap(tmp, checked, False)
        finally:
            ledger.leave()

    def barrier(self, group=None, **kwargs):
        ledger = self._ledger_for(group)
        ledger.enter("barrier", None, SYMMETRIC)
        try:
            self._exchange(ledger, group)
        finally:
            ledger.leave()

    def _device_for(self, group):
        if self._tdist.get_backend(group) == "nccl":
            return self._torch.device("cuda", self._torch.cuda.current_device())
        return self._torch.device("cpu")

    def _exchange(self, ledger, group) -> None:
        """Check the window's digest with one small int64 all_gather."""
        torch = self._torch
        digest = int.from_bytes(ledger.stamp()[2:], "little")
        signed = digest - (1 << 64) if digest >= 1 << 63 else digest
        mine = torch.tensor([signed], dtype=torch.long, device=self._device_for(group))
        out = [torch.empty_like(mine) for _ in range(self._tdist.get_world_size(group))]
        self._tdist.all_gather(out, mine, group=group)
        ledger.unwrap([(make_stamp(int(t.item()) & _M64), None) for t in out], True, True)

    def _make_checked(self, name: str, method: Callable) -> Callable:
        try:
            group_index = list(inspect.signature(method).parameters).index("group")
        except (TypeError, ValueError):
            group_index = None

        def checked(*args, **kwargs):
            group = kwargs.get("group")
            if group is None and group_index is not None and len(args) > group_index:
                group = args[group_index]
            ledger = self._ledger_for(group)
            check = ledger.enter(name, args[0] if args else kwargs.get("tensor"), LAZY)
            try:
                if check:
                    self._exchange(ledger, group)
                return method(*args, **kwargs)
            finally:
                ledger.leave()

        checked.__name__ = name
        return checked
