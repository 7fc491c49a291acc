"""The run's plumbing, around the analysis: which files (:mod:`.discovery`),
which of them are worth a parse (:mod:`.prefilter`, in rounds driven by
:mod:`.gather`), their facts from the cache (:mod:`.cache`) or the worker
processes (:mod:`.workers`), and one run from the command line's paths to a
``CheckResult`` (:mod:`.run`).  :mod:`cslint.api` is its facade."""

from typing import Optional

#: what the runs of this process left for its exit to free (:func:`leave_to_exit`);
#: None: each run frees what it kept as it ends
_LEFT_TO_EXIT: Optional[list] = None


def leave_to_exit() -> None:
    """This process ends with ``os._exit`` once its run is done (the
    ``cslint`` command): from now on, what a run kept in this process for its
    whole length (the syntax trees and pending summaries of ``--jobs 1`` or a
    small tree, :class:`~cslint.engine.workers.Workers`) is left for the exit
    to return, not freed one object at a time as the run ends (0.2 s of a
    14 s run of vLLM, every node of every tree kept).  A worker process ends
    with ``os._exit`` too, and frees nothing either."""
    global _LEFT_TO_EXIT
    if _LEFT_TO_EXIT is None:
        _LEFT_TO_EXIT = []


def dropped(kept: dict) -> dict:
    """An empty dict, to replace ``kept`` in a run that is done with it:
    ``kept`` is freed as the caller lets it go, or at the exit where the
    process leaves it so (:func:`leave_to_exit`)."""
    if _LEFT_TO_EXIT is not None and kept:
        _LEFT_TO_EXIT.append(kept)
    return {}
