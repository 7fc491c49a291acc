"""Runtime collective sanitizer: fingerprinted collectives, watchdog, per-rank report.

Opt in from code::

    from cslint.runtime import wrap
    dist = wrap(dist, report_dir="cslint-report")      # Distributed-like object
    comm = wrap(MPI.COMM_WORLD, report_dir=...)        # mpi4py communicator
    tdist = wrap(torch.distributed, report_dir=...)    # the torch.distributed module

or through the environment: `maybe_wrap(obj)` wraps only when
``CSLINT_SANITIZE=1`` (report directory from ``CSLINT_REPORT_DIR``, default
``./cslint-report``; stall timeout from ``CSLINT_SANITIZE_TIMEOUT``, default 2 s).

Every collective is entered in its group's ledger (op, group, call path,
sequence number); the ranks compare digests of their ledgers on the calls
that could part them (see `cslint.runtime.ledger`), inside the messages they
exchange anyway where the collective carries Python objects.  A rank that
disagrees or waits longer than the timeout writes
``rank<R>.json`` into the report directory and the job is aborted
(exit status `ABORT_EXIT_CODE`).  `diagnose(report_dir)` merges the files and
names the diverging sites per rank (``print(diagnose(dir))`` prints the
report; ``python -m cslint.runtime report DIR`` too); `write_timeline_svg`
draws the per-rank timeline.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from .core import (
    ABORT_EXIT_CODE,
    ENV_ENABLE,
    ENV_REPORT_DIR,  # noqa: F401 - the environment variables are the package's names too
    ENV_TIMEOUT,  # noqa: F401
    WIRE_TAG,
    CollectiveDivergence,
    Sanitizer,
    _sanitizer_for,
)
from .wrappers import DistributedProxy, MPICommProxy, TorchDistributedProxy

__all__ = [
    "ABORT_EXIT_CODE",
    "WIRE_TAG",
    "CollectiveDivergence",
    "Sanitizer",
    "diagnose",
    "enabled",
    "install",
    "maybe_wrap",
    "wrap",
    "write_timeline_svg",
]

def enabled() -> bool:
    """Whether ``CSLINT_SANITIZE`` asks for the sanitizer."""
    return os.environ.get(ENV_ENABLE, "").strip().lower() in ("1", "true", "yes", "on")


def _kind_of(obj: Any) -> str:
    if getattr(obj, "__name__", "") == "torch.distributed":
        return "torch"
    module = type(obj).__module__ or ""
    if module.startswith("mpi4py"):
        return "mpi"
    if any(hasattr(obj, name) for name in ("tp_allgather", "pp_broadcast", "allgather", "broadcast")):
        return "distributed"
    raise TypeError(f"cslint.runtime.wrap: do not know how to sanitize {type(obj).__name__!r} "
                    "(expected an mpi4py Comm, torch.distributed, or a Distributed-like object)")


def _rank_of(obj: Any, kind: str) -> tuple[int, int]:
    if kind == "mpi":
        from mpi4py import MPI

        return MPI.COMM_WORLD.Get_rank(), MPI.COMM_WORLD.Get_size()
    if kind == "torch":
        return obj.get_rank(), obj.get_world_size()
    return int(getattr(obj, "rank", 0)), int(getattr(obj, "world_size", 0))


def _default_abort(obj: Any, kind: str) -> Callable[[int], None] | None:
    if kind == "mpi":
        return obj.Abort
    if kind == "distributed" and callable(getattr(obj, "abort", None)):
        return obj.abort
    try:  # an MPI job started by mpiexec: take every rank down, not just this one
        import sys

        if "mpi4py.MPI" in sys.modules:
            from mpi4py import MPI

            if MPI.Is_initialized() and not MPI.Is_finalized():
                return MPI.COMM_WORLD.Abort
    except ImportError:
        pass
    return None


def wrap(obj: Any, *, report_dir: str | None = None, timeout: float | None = None, grace: float = 1.0,
         history: int = 64, depth: int = 2, on_error: str = "abort", abort: Callable[[int], None] | None = None,
         group: str = "", strict_site: bool = True, first_timeout: float = 30.0, carry_every: int = 16,
         check_every: int = 64):
    """Return a sanitized view of `obj` with the same collective API.

    `timeout`: seconds a collective may wait before the watchdog reports and
    aborts (default ``CSLINT_SANITIZE_TIMEOUT`` or 2; 0 disables the watchdog).
    Raise it for jobs whose ranks legitimately wait longer (long steps between
    collectives).  The first collective of each group gets `first_timeout`
    instead (connection set-up, NCCL communicator creation).
    `on_error`: ``abort`` (write the state, take the job down) or ``raise``
    (`CollectiveDivergence` on a failed check).
    `strict_site`: False when ranks may issue the same collective from
    different lines on purpose (only op, group and order are compared then).
    `carry_every` / `check_every`: calls between two sampled checks of object
    collectives / of reductions and tensor collectives (see `cslint.runtime.ledger`).
    """
    kind = _kind_of(obj)
    rank, world = _rank_of(obj, kind)
    sanitizer = _sanitizer_for(rank, world, report_dir=report_dir, timeout=timeout, grace=grace, history=history,
                               depth=depth, on_error=on_error, abort=abort or _default_abort(obj, kind),
                               strict_site=strict_site, first_timeout=first_timeout, carry_every=carry_every,
                               check_every=check_every)
    if kind == "mpi":
        return MPICommProxy(obj, sanitizer, group=group)
    if kind == "torch":
        return TorchDistributedProxy(obj, sanitizer)
    return DistributedProxy(obj, sanitizer)


def maybe_wrap(obj: Any, **kwargs):
    """`wrap(obj)` when ``CSLINT_SANITIZE=1``, else `obj` unchanged."""
    return wrap(obj, **kwargs) if enabled() else obj


def install(**options: Any) -> None:
    """Sanitize torch.distributed and mpi4py's COMM_WORLD in place (see `cslint.runtime.autopatch`)."""
    from .autopatch import install as _install

    _install(**options)


def diagnose(report_dir: str, **kwargs):
    """Merge the per-rank state files (see `cslint.runtime.report.diagnose`)."""
    from .report import diagnose as _diagnose

    return _diagnose(report_dir, **kwargs)


def write_timeline_svg(diagnosis, path: str) -> str:
    """Draw the per-rank collective timeline of a diagnosis (see `cslint.runtime.timeline`)."""
    from .timeline import write_svg

    return write_svg(diagnosis, path)
