"""Sanitize unmodified programs: patch torch.distributed and mpi4py's COMM_WORLD in place.

    CSLINT_SANITIZE=1 mpiexec -n 4 python -m cslint.runtime train.py --args
    python -m cslint.runtime --report-dir rep --timeout 5 train.py --args

`install()` replaces the collectives of the ``torch.distributed`` module
(object and tensor ones; patched as soon as the module is imported, so it can
run before the program imports torch) and ``mpi4py.MPI.COMM_WORLD`` (and the
communicators split or duplicated from it) with sanitized versions.  Code
that holds a ``Distributed``-like object can use `cslint.runtime.wrap`
instead, which also labels TP/PP groups.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import types
from typing import Any

_TORCH_FUNCS = ("all_gather_object", "broadcast_object_list", "gather_object", "barrier", "all_reduce",
                "all_gather", "all_gather_into_tensor", "reduce_scatter", "reduce_scatter_tensor", "broadcast",
                "reduce", "gather", "scatter", "all_to_all", "all_to_all_single")
_TORCH_HELPERS = ("get_rank", "get_world_size", "get_backend", "get_process_group_ranks")

_OPTIONS: dict[str, Any] = {}
_installed: set[str] = set()


def _patch_torch(tdist) -> None:
    if "torch" in _installed:
        return
    _installed.add("torch")
    originals = types.SimpleNamespace(**{name: getattr(tdist, name) for name in _TORCH_FUNCS + _TORCH_HELPERS
                                         if hasattr(tdist, name)})
    state: dict[str, Any] = {}

    def proxy():
        # created at the first collective: the process group exists by then
        if "proxy" not in state:
            from .core import _sanitizer_for
            from .wrappers import TorchDistributedProxy

            sanitizer = _sanitizer_for(originals.get_rank(), originals.get_world_size(), **_OPTIONS)
            state["proxy"] = TorchDistributedProxy(originals, sanitizer)
        return state["proxy"]

    for name in _TORCH_FUNCS:
        if not hasattr(originals, name):
            continue

        def patched(*args, __name=name, **kwargs):
            return getattr(proxy(), __name)(*args, **kwargs)

        patched.__name__ = name
        patched.__doc__ = getattr(originals, name).__doc__
        setattr(tdist, name, patched)


def _patch_mpi(mpi_module) -> None:
    if "mpi" in _installed:
        return
    _installed.add("mpi")
    from .core import _sanitizer_for
    from .wrappers import MPICommProxy

    world = mpi_module.COMM_WORLD
    sanitizer = _sanitizer_for(world.Get_rank(), world.Get_size(), abort=world.Abort, **_OPTIONS)
    mpi_module.COMM_WORLD = MPICommProxy(world, sanitizer, group="world")


class _PostImport(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Patch a module right after it is imported (only the names in `hooks`)."""

    def __init__(self) -> None:
        self.hooks = {"torch.distributed": _patch_torch, "mpi4py.MPI": _patch_mpi}
        self._busy: set[str] = set()

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in self.hooks or fullname in self._busy:
            return None
        self._busy.add(fullname)
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            self._busy.discard(fullname)
        if spec is None or spec.loader is None:
            return None
        spec.loader = _ChainLoader(spec.loader, self.hooks[fullname])
        return spec


class _ChainLoader(importlib.abc.Loader):
    def __init__(self, loader, hook) -> None:
        self._loader = loader
        self._hook = hook

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        self._hook(module)


def install(**options: Any) -> None:
    """Sanitize torch.distributed and mpi4py's COMM_WORLD in this process (idempotent).

    `options` go to the sanitizer (report_dir, timeout, grace, history, on_error).
    """
    _OPTIONS.update(options)
    if "torch.distributed" in sys.modules:
        _patch_torch(sys.modules["torch.distributed"])
    if "mpi4py.MPI" in sys.modules:
        _patch_mpi(sys.modules["mpi4py.MPI"])
    if not any(isinstance(f, _PostImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _PostImport())
