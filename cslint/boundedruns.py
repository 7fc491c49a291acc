"""Runs of multi-rank jobs (``mpiexec``, forked ranks) that no rank outlives.

A test or a benchmark that launches ranks usually ends a hung job itself:
the launcher runs in a session of its own and a timeout kills that session.
That kill runs in the runner, so a runner stopped with SIGKILL (a killed test
suite) never reaches it, and a hung job's ranks spin on for as long as the
machine stays up.  Here a launched job is bounded twice:

- :func:`start_bounded` runs the launcher in a session of its own under
  coreutils ``timeout``, which ends the whole session by itself a little
  after the runner's own deadline (TERM, which ``mpiexec`` passes to its
  ranks, then KILL), whether or not the runner is still there;
- :func:`fork_ranks` starts forked ranks (``multiprocessing``'s fork
  context) that the kernel kills when the process that forked them dies
  (``PR_SET_PDEATHSIG``, Linux), so the runner's own bounded wait and kill
  are not the only way they end.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys

#: how long after the runner's deadline the launcher ends by itself (the
#: runner's own kill normally comes first), and how long after the TERM the KILL
SPARE_SECONDS = 10
KILL_AFTER_SECONDS = 5

_PR_SET_PDEATHSIG = 1


def bounded_command(command: list, seconds: float) -> list:
    """``command`` under coreutils ``timeout``: TERM to its process group
    ``seconds`` + :data:`SPARE_SECONDS` after it starts, KILL
    :data:`KILL_AFTER_SECONDS` later.  Unchanged where there is no ``timeout``."""
    timeout_command = shutil.which("timeout")
    if timeout_command is None:
        return list(command)
    return [timeout_command, "-k", str(KILL_AFTER_SECONDS), f"{seconds + SPARE_SECONDS:.0f}", *command]


def start_bounded(command: list, seconds: float, **popen) -> subprocess.Popen:
    """Start ``command`` in a session of its own that ends by itself a little
    after ``seconds`` (:func:`bounded_command`).  The caller waits at most
    ``seconds`` and then calls :func:`kill_session`."""
    return subprocess.Popen(bounded_command(command, seconds), start_new_session=True, **popen)


def kill_session(process: subprocess.Popen) -> None:
    """Kill every process of the session :func:`start_bounded` started (the
    launcher and whatever is left of its ranks)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def wait_bounded(process: subprocess.Popen, seconds: float) -> bool:
    """Wait for a job :func:`start_bounded` started, at most ``seconds``, then
    kill what is left of its session; True where it ran out of time."""
    try:
        process.wait(timeout=seconds)
        return False
    except subprocess.TimeoutExpired:
        return True
    finally:
        kill_session(process)
        process.wait()


def run_bounded(command: list, timeout: float, **popen) -> subprocess.CompletedProcess:
    """``subprocess.run`` with text output for a job of ranks: the job runs in
    a session of its own (:func:`start_bounded`) that is killed afterwards;
    on a timeout the whole session dies and the result has returncode -9
    instead of raising."""
    process = start_bounded(command, timeout, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_session(process)
        out, err = process.communicate()
    finally:
        kill_session(process)
    return subprocess.CompletedProcess(command, process.returncode, out, err)


def die_with_parent(parent: int) -> None:
    """Have the kernel kill this process when its parent dies, and end it now
    where the parent ``parent`` (a pid) is gone already (Linux; elsewhere
    nothing is asked)."""
    if sys.platform.startswith("linux"):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


def fork_ranks(context, target, rank_args: list) -> list:
    """Start one forked process per item of ``rank_args`` (a tuple of
    ``target``'s arguments), each killed by the kernel when this process dies
    (:func:`die_with_parent`).  ``context`` is ``multiprocessing``'s fork
    context; the caller joins them and kills those left after its deadline."""
    parent = os.getpid()
    processes = [context.Process(target=_rank_dying_with_parent, args=(parent, target, args)) for args in rank_args]
    for process in processes:
        process.start()
    return processes


def _rank_dying_with_parent(parent: int, target, args: tuple) -> None:
    die_with_parent(parent)
    target(*args)
