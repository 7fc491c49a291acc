"""Communicator wrappers that fingerprint every collective.

- `DistributedProxy`: a TensorRT-LLM-style ``Distributed`` object
  (``tp_allgather``, ``pp_broadcast``, ``allreduce``, ``barrier``...); the group
  comes from the method's prefix (``tp_``, ``pp_``, ``cp_``, ``tp_cp_``; none =
  world) and is labelled with its member ranks where the object tells them.
- `MPICommProxy`: an mpi4py ``Comm``.
- `TorchDistributedProxy`: the ``torch.distributed`` module.

Object collectives carry the fingerprint inside the message they already send
(``(fingerprint, payload)``), so checking costs no extra round trip.
Collectives whose payload cannot carry it (reductions, tensor and buffer
collectives, barriers) first exchange the fingerprint in a small allgather.
Everything else passes through untouched.

The fingerprint is one integer: the crc32 of (op, group, call site, caller)
shifted left by 40 bits, plus the sequence number within the group.
"""

from __future__ import annotations

import sys
import time
import zlib
from collections.abc import Callable
from typing import Any

from .core import SEQ_BITS, Sanitizer
from .fingerprint import _RUNTIME_DIR

_getframe = sys._getframe
_now = time.time
_PREFIXES = (("tp_cp_", "tp_cp"), ("tp_", "tp"), ("pp_", "pp"), ("cp_", "cp"), ("dp_", "dp"), ("ep_", "ep"))


def _group_of(method: str) -> str:
    for prefix, group in _PREFIXES:
        if method.startswith(prefix):
            return group
    return "world"


class _Site:
    """Per (wrapped method) fast path: call path lookup, sequence numbers, history."""

    __slots__ = ("cache", "group", "op", "san", "seq_cell")

    def __init__(self, san: Sanitizer, op: str, group: str) -> None:
        self.san = san
        self.op = op
        self.group = group
        self.cache: dict = {}
        # sequence numbers are per group, shared by every method of that group
        cell = san.seq_cells.get(group)
        if cell is None:
            cell = san.seq_cells[group] = [0]
        self.seq_cell = cell


def _enter(site: _Site, frame, payload) -> tuple:
    """Record entry into a collective; returns (fingerprint, record)."""
    while frame.f_code.co_filename.startswith(_RUNTIME_DIR):  # called through install()'s patches
        frame = frame.f_back
    back = frame.f_back
    # f_lasti and id() are cheap; f_lineno and hashing a code object are not
    key = (id(frame.f_code), frame.f_lasti, id(back.f_code), back.f_lasti) if back is not None else (id(frame.f_code),)
    path = site.cache.get(key)
    if path is None:
        path = site.cache[key] = site.san.paths.resolve(frame, site.op, site.group)
    cell = site.seq_cell
    seq = cell[0]
    cell[0] = seq + 1
    rec = (path, seq, type(payload), _now())
    site.san.current = rec
    return (path.digest << SEQ_BITS) | seq, rec


def _leave(san: Sanitizer, rec: tuple) -> None:
    san.history.append(rec)
    san.current = None


def _split(san: Sanitizer, rec: tuple, fp: int, received) -> list:
    """Unwrap gathered ``(fingerprint, payload)`` messages, checking each fingerprint."""
    out = []
    try:
        for peer_fp, payload in received:
            if peer_fp != fp:
                raise ValueError
            out.append(payload)
    except (TypeError, ValueError):
        fps = []
        for item in received:
            fps.append(item[0] if type(item) is tuple and len(item) == 2 else ("unsanitized", item))
        san.divergence(rec, fps)
        return [item[1] if type(item) is tuple and len(item) == 2 else item for item in received]
    return out


def _fast_allgather(site: _Site, inner: Callable, name: str) -> Callable:
    """An object allgather carrying the fingerprint; `_enter`/`_split`/`_leave` inlined (hot path)."""
    san = site.san
    cache = site.cache
    cell = site.seq_cell
    op, group = site.op, site.group
    history_append = san.history.append
    resolve = san.paths.resolve

    def allgather(obj, *args, **kwargs):
        frame = _getframe(1)
        back = frame.f_back
        # f_lasti and id() are cheap; f_lineno and hashing a code object are not
        key = (id(frame.f_code), frame.f_lasti, id(back.f_code), back.f_lasti) if back is not None else (
            id(frame.f_code), frame.f_lasti)
        path = cache.get(key)
        if path is None:
            path = cache[key] = resolve(frame, op, group)
        seq = cell[0]
        cell[0] = seq + 1
        fp = (path.digest << SEQ_BITS) | seq
        san.current = rec = (path, seq, obj.__class__, _now())
        # a plain call is cheaper than unpacking empty *args/**kwargs
        received = inner((fp, obj), *args, **kwargs) if args or kwargs else inner((fp, obj))
        try:
            out = [payload for peer_fp, payload in received if peer_fp == fp]
        except (TypeError, ValueError):
            out = ()
        if len(out) != len(received):
            out = _split(san, rec, fp, received)
        history_append(rec)
        san.current = None
        return out

    allgather.__name__ = name
    return allgather


class DistributedProxy:
    """Sanitized view of a ``Distributed``-like object (same methods, same results)."""

    _ALLGATHER = ("allgather", "tp_allgather", "pp_allgather", "cp_allgather", "tp_cp_allgather", "dp_allgather")
    _BROADCAST = ("broadcast", "tp_broadcast", "pp_broadcast", "cp_broadcast", "tp_cp_broadcast")
    _GATHER = ("gather", "tp_gather", "pp_gather")
    _CHECKED = ("allreduce", "tp_allreduce", "pp_allreduce", "barrier", "tp_barrier", "pp_barrier",
                "tp_allgather_int64", "reduce_scatter", "tp_reduce_scatter", "alltoall", "tp_alltoall")

    def __init__(self, inner: Any, sanitizer: Sanitizer) -> None:
        object.__setattr__(self, "_inner", inner)
        object.__setattr__(self, "_sanitizer", sanitizer)
        object.__setattr__(self, "_labels", self._group_labels(inner, sanitizer))
        for names, factory in ((self._ALLGATHER, self._make_allgather), (self._BROADCAST, self._make_rooted),
                               (self._GATHER, self._make_rooted), (self._CHECKED, self._make_checked)):
            for name in names:
                if callable(getattr(inner, name, None)):
                    object.__setattr__(self, name, factory(name))

    @staticmethod
    def _group_labels(inner: Any, sanitizer: Sanitizer) -> dict[str, str]:
        """Label groups with their members (``tp[0,1]``) so reports never mix two TP groups."""
        labels = {}
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

    def _site(self, name: str) -> _Site:
        group = _group_of(name)
        return _Site(self._sanitizer, name, self._labels.get(group, group))

    def _make_allgather(self, name: str) -> Callable:
        inner = getattr(self._inner, name)
        return _fast_allgather(self._site(name), inner, name)

    def _make_rooted(self, name: str) -> Callable:
        """broadcast / gather: only the receiving side can check."""
        inner = getattr(self._inner, name)
        site = self._site(name)
        san = self._sanitizer
        is_gather = name in self._GATHER

        def rooted(obj, root=0, *args, **kwargs):
            fp, rec = _enter(site, _getframe(1), obj)
            received = inner((fp, obj), root, *args, **kwargs)
            if is_gather:
                out = _split(san, rec, fp, received) if isinstance(received, list) else received
            else:
                out = _split(san, rec, fp, [received])[0]
            _leave(san, rec)
            return out

        rooted.__name__ = name
        return rooted

    def _fingerprint_exchange(self, group: str):
        """The allgather used to check collectives that cannot carry a fingerprint."""
        for candidate in ((f"{group}_allgather" if group != "world" else "allgather"), "allgather"):
            method = getattr(self._inner, candidate, None)
            if callable(method):
                return method
        return None

    def _make_checked(self, name: str) -> Callable:
        inner = getattr(self._inner, name)
        site = self._site(name)
        san = self._sanitizer
        exchange = self._fingerprint_exchange(_group_of(name))

        def checked(*args, **kwargs):
            fp, rec = _enter(site, _getframe(1), args[0] if args else None)
            if exchange is not None:
                _split(san, rec, fp, exchange((fp, None)))
            result = inner(*args, **kwargs)
            _leave(san, rec)
            return result

        checked.__name__ = name
        return checked


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

    _CHECKED = _BUFFER = ("Allgather", "Allgatherv", "Allreduce", "Alltoall", "Alltoallv", "Bcast", "Gather", "Gatherv",
               "Reduce", "Reduce_scatter", "Reduce_scatter_block", "Scatter", "Scatterv", "Scan", "Exscan",
               "allreduce", "reduce", "scan", "exscan")

    def __init__(self, comm: Any, sanitizer: Sanitizer, group: str = "") -> None:
        self._target = self._comm = comm
        self._sanitizer = sanitizer
        self._group = group or comm.Get_name() or f"comm{comm.Get_size()}"
        self._sites: dict[str, _Site] = {}
        self._checked_cache: dict[str, Callable] = {}
        self.allgather = _fast_allgather(self._site("allgather"), comm.allgather, "allgather")

    def _site(self, op: str) -> _Site:
        site = self._sites.get(op)
        if site is None:
            site = self._sites[op] = _Site(self._sanitizer, op, self._group)
        return site

    def Abort(self, errorcode: int = 1):
        return self._comm.Abort(errorcode)

    # communicators derived from a sanitized one are sanitized too; members of
    # one derived communicator pass the same color, hence get the same label
    def Split(self, color: int = 0, key: int = 0):
        return MPICommProxy(self._comm.Split(color, key), self._sanitizer, group=f"{self._group}/split{color}")

    def Dup(self, *args):
        return MPICommProxy(self._comm.Dup(*args), self._sanitizer, group=f"{self._group}/dup")

    def alltoall(self, sendobj):
        fp, rec = _enter(self._site("alltoall"), _getframe(1), sendobj)
        out = _split(self._sanitizer, rec, fp, self._comm.alltoall([(fp, item) for item in sendobj]))
        _leave(self._sanitizer, rec)
        return out

    def bcast(self, obj, root: int = 0):
        fp, rec = _enter(self._site("bcast"), _getframe(1), obj)
        out = _split(self._sanitizer, rec, fp, [self._comm.bcast((fp, obj), root)])[0]
        _leave(self._sanitizer, rec)
        return out

    def gather(self, sendobj, root: int = 0):
        fp, rec = _enter(self._site("gather"), _getframe(1), sendobj)
        received = self._comm.gather((fp, sendobj), root)
        out = _split(self._sanitizer, rec, fp, received) if received is not None else None
        _leave(self._sanitizer, rec)
        return out

    def scatter(self, sendobj, root: int = 0):
        fp, rec = _enter(self._site("scatter"), _getframe(1), sendobj)
        items = None if sendobj is None else [(fp, item) for item in sendobj]
        out = _split(self._sanitizer, rec, fp, [self._comm.scatter(items, root)])[0]
        _leave(self._sanitizer, rec)
        return out

    def barrier(self):
        fp, rec = _enter(self._site("barrier"), _getframe(1), None)
        _split(self._sanitizer, rec, fp, self._comm.allgather((fp, None)))
        _leave(self._sanitizer, rec)

    Barrier = barrier

    def _make_checked(self, name: str, method: Callable) -> Callable:
        site = self._site(name)
        san = self._sanitizer
        comm_allgather = self._comm.allgather

        def checked(*args, **kwargs):
            fp, rec = _enter(site, _getframe(1), args[0] if args else None)
            _split(san, rec, fp, comm_allgather((fp, None)))
            result = method(*args, **kwargs)
            _leave(san, rec)
            return result

        return checked


class TorchDistributedProxy(_SanitizedProxy):
    """Sanitized view of the ``torch.distributed`` module."""

    _CHECKED = _TENSOR = ("all_reduce", "all_gather", "all_gather_into_tensor", "reduce_scatter", "reduce_scatter_tensor",
               "broadcast", "reduce", "gather", "scatter", "all_to_all", "all_to_all_single")

    def __init__(self, tdist: Any, sanitizer: Sanitizer) -> None:
        import torch

        self._torch = torch
        self._target = self._tdist = tdist
        self._sanitizer = sanitizer
        self._group_names: dict[int, str] = {}
        self._sites: dict[tuple, _Site] = {}
        self._checked_cache: dict[str, Callable] = {}

    def _site(self, op: str, group) -> _Site:
        key = (op, id(group))
        site = self._sites.get(key)
        if site is None:
            site = self._sites[key] = _Site(self._sanitizer, op, self._group_name(group))
        return site

    def _group_name(self, group) -> str:
        if group is None:
            return "world"
        key = id(group)
        name = self._group_names.get(key)
        if name is None:
            try:
                ranks = self._tdist.get_process_group_ranks(group)
                name = "ranks[" + ",".join(map(str, ranks)) + "]"
                self._sanitizer.groups[name] = tuple(ranks)
            except Exception:  # noqa: BLE001 - any group object we cannot name
                name = f"group{key}"
            self._group_names[key] = name
        return name

    def all_gather_object(self, object_list, obj, group=None):
        fp, rec = _enter(self._site("all_gather_object", group), _getframe(1), obj)
        tmp = [None] * len(object_list)
        self._tdist.all_gather_object(tmp, (fp, obj), group=group)
        object_list[:] = _split(self._sanitizer, rec, fp, tmp)
        _leave(self._sanitizer, rec)

    def broadcast_object_list(self, object_list, src=0, group=None, device=None):
        fp, rec = _enter(self._site("broadcast_object_list", group), _getframe(1), object_list)
        holder = [(fp, list(object_list))]
        self._tdist.broadcast_object_list(holder, src=src, group=group, device=device)
        object_list[:] = _split(self._sanitizer, rec, fp, holder)[0]
        _leave(self._sanitizer, rec)

    def gather_object(self, obj, object_gather_list=None, dst=0, group=None):
        fp, rec = _enter(self._site("gather_object", group), _getframe(1), obj)
        tmp = None if object_gather_list is None else [None] * len(object_gather_list)
        self._tdist.gather_object((fp, obj), tmp, dst=dst, group=group)
        if object_gather_list is not None:
            object_gather_list[:] = _split(self._sanitizer, rec, fp, tmp)
        _leave(self._sanitizer, rec)

    def barrier(self, group=None, **kwargs):
        fp, rec = _enter(self._site("barrier", group), _getframe(1), None)
        self._exchange(rec, fp, group, "")
        _leave(self._sanitizer, rec)

    def _device_for(self, group):
        if self._tdist.get_backend(group) == "nccl":
            return self._torch.device("cuda", self._torch.cuda.current_device())
        return self._torch.device("cpu")

    def _exchange(self, rec: tuple, fp: int, group, kind: str) -> None:
        """Check a fingerprint (and the tensor's dtype/shape) with one small int64 all_gather."""
        torch = self._torch
        shape_digest = zlib.crc32(kind.encode())
        mine = torch.tensor([fp >> SEQ_BITS, fp & ((1 << SEQ_BITS) - 1), shape_digest], dtype=torch.long,
                            device=self._device_for(group))
        out = [torch.empty_like(mine) for _ in range(self._tdist.get_world_size(group))]
        self._tdist.all_gather(out, mine, group=group)
        rows = [tuple(t.tolist()) for t in out]
        own = tuple(mine.tolist())
        if any(row != own for row in rows):
            self._sanitizer.divergence(rec, [(r[0] << SEQ_BITS) | r[1] if r[2] == own[2] else ("shape", r)
                                             for r in rows])

    def _make_checked(self, name: str, method: Callable) -> Callable:
        def checked(*args, **kwargs):
            group = kwargs.get("group")
            tensor = args[0] if args else kwargs.get("tensor")
            kind = f"{getattr(tensor, 'dtype', '')}{tuple(getattr(tensor, 'shape', ()))}"
            fp, rec = _enter(self._site(name, group), _getframe(1), tensor)
            self._exchange(rec, fp, group, kind)
            result = method(*args, **kwargs)
            _leave(self._sanitizer, rec)
            return result

        return checked
