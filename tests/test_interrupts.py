"""Interrupts and write errors: Ctrl-C and SIGTERM end a run without a
traceback and with the shell's status (130, 143); an output that cannot be
written is the user's error (exit 2, naming the file), never an internal
error; ``fix --write`` leaves no module behind and honours read-only files.

The signals are real: each run is a process group of its own, signalled as a
terminal's Ctrl-C signals the foreground group, once its worker processes
exist (so the signal lands inside the analysis, not before it starts).
"""

from __future__ import annotations

import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
REPLICA = REPO_ROOT / "examples" / "trtllm_replica"

HAZARD = (
    "import torch.distributed as dist\n\n\n"
    "def drain(tensor):\n    if dist.get_rank() == 0:\n        return None\n    dist.all_reduce(tensor)\n"
    "    return tensor\n"
)


def _module(index: int) -> str:
    """A module with one early-exit hazard and enough other code to take time to analyse."""
    body = (f"import torch.distributed as dist\n\n\ndef step_{index}(t, n):\n"
            f"    if dist.get_rank() == {index % 4}:\n        return None\n"
            f"    for k in range(n):\n        t = t + k\n    dist.all_reduce(t)\n    return t\n\n\n")
    for j in range(15):
        body += (f"def helper_{index}_{j}(x, y):\n    z = [a * b for a, b in zip(x, y) if a > {j}]\n"
                 f"    return sum(z) + len({{k: v for k, v in enumerate(z)}})\n\n\n")
    return body


def _big_tree(directory: Path, files: int = 600) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for index in range(files):
        (directory / f"m{index}.py").write_text(_module(index), encoding="utf-8")
    return directory


def _children(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as handle:
            return handle.read().split()
    except OSError:
        return []


def _terminal_signals() -> None:
    """Give the run the signal handling of a terminal's foreground job: a
    suite started in the background (``make test &``) inherits Ctrl-C
    ignored, and a Python started with SIGINT ignored never raises
    KeyboardInterrupt, which is not what these tests are about."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _signal_once_working(argv: list[str], cwd: Path, signum: int) -> tuple[subprocess.CompletedProcess, list[str]]:
    """Start ``argv`` in its own process group, wait until it has started its
    worker processes, send ``signum`` to the whole group (as a terminal's
    Ctrl-C does), and return what it printed and the workers it had."""
    if not os.path.exists(f"/proc/{os.getpid()}/task/{os.getpid()}/children"):
        pytest.skip("needs /proc/PID/task/PID/children to see the worker processes")
    process = subprocess.Popen(argv, cwd=str(cwd), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True, preexec_fn=_terminal_signals)
    # generous: on a loaded 2-core machine start-up, discovery and the prefilter of 600 files took over a minute
    deadline = time.monotonic() + 240
    workers: list[str] = []
    while time.monotonic() < deadline and process.poll() is None:
        workers = _children(process.pid)
        if workers:
            break
        time.sleep(0.01)
    if not workers:
        process.kill()
        out, err = process.communicate(timeout=60)
        ended = "ended with status %s" % process.returncode if process.returncode not in (-9, None) else "timed out"
        pytest.fail(f"the run {ended} before starting its workers: nothing was interrupted\n{err[-2000:]}")
    os.killpg(process.pid, signum)
    out, err = process.communicate(timeout=120)
    return subprocess.CompletedProcess(argv, process.returncode, out, err), workers


def _gone(pids: list[str]) -> bool:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if not any(os.path.exists(f"/proc/{pid}") for pid in pids):
            return True
        time.sleep(0.05)
    return False


CSLINT = [sys.executable, "-m", "cslint"]


@pytest.mark.parametrize("signum, status, word", [(signal.SIGINT, 130, "interrupted"),
                                                  (signal.SIGTERM, 143, "terminated")])
def test_check_ends_on_a_signal_without_a_traceback(tmp_path, signum, status, word):
    tree = _big_tree(tmp_path / "tree")
    done, workers = _signal_once_working([*CSLINT, "check", "--no-cache", "--jobs", "2", "."], tree, signum)
    assert done.returncode == status, done.stderr
    assert done.stderr.strip() == f"cslint: {word}"  # no traceback, from the parent or a worker
    assert _gone(workers)


def test_fix_write_interrupted_leaves_the_files_as_they_were(tmp_path):
    tree = _big_tree(tmp_path / "tree")
    before = {p.name: p.read_bytes() for p in tree.iterdir()}
    done, _ = _signal_once_working([*CSLINT, "fix", "--no-cache", "--jobs", "2", "--write", "--unsafe-fixes", "."],
                                   tree, signal.SIGINT)
    assert done.returncode == 130, done.stderr
    assert "Traceback" not in done.stderr and "cslint: interrupted" in done.stderr
    assert {p.name: p.read_bytes() for p in tree.iterdir()} == before


def test_a_write_interrupted_between_temporary_and_rename_removes_the_temporary(tmp_path, monkeypatch):
    from codemods import driver
    from cslint.api import check_paths

    target = tmp_path / "worker.py"
    target.write_text(HAZARD, encoding="utf-8")
    plan = driver.plan_fixes(check_paths([str(target)]), unsafe=True)
    assert plan.applied
    staged = []

    def interrupted_replace(source, destination):
        staged.append(os.path.basename(source))
        raise KeyboardInterrupt

    monkeypatch.setattr(driver.os, "replace", interrupted_replace)
    with pytest.raises(KeyboardInterrupt):
        driver.write_fixes(plan)
    (name,) = staged
    # a temporary that a kill -9 could leave behind is not a module any tool would pick up
    assert name.startswith(".cslint-fix-worker.py.") and name.endswith(".tmp") and not name.endswith(".py")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["worker.py"]
    assert target.read_text(encoding="utf-8") == HAZARD


def test_tensorrt_llm_patch_apply_ends_on_ctrl_c_with_130(tmp_path):
    tree = tmp_path / "trtllm"
    shutil.copytree(REPLICA, tree)
    _big_tree(tree / "tensorrt_llm" / "_torch" / "pyexecutor" / "generated", files=400)
    out = tmp_path / "out"
    done, _ = _signal_once_working([sys.executable, "-m", "tensorrt_llm_patch", "apply", "--tree", str(tree),
                                    "--out", str(out), "--jobs", "2"], tmp_path, signal.SIGINT)
    assert done.returncode == 130, done.stderr
    assert done.stderr.strip() == "tensorrt_llm_patch: error: interrupted"
    assert not out.exists() or not any(out.iterdir())


# -- write errors -----------------------------------------------------------------------


def _cslint(cwd, *args: str, prefix: tuple = ()) -> subprocess.CompletedProcess:
    return subprocess.run([*prefix, *CSLINT, *args], cwd=str(cwd), capture_output=True, text=True, timeout=120)


def _unprivileged() -> tuple:
    """A command prefix that runs as a user without root's right to write anywhere."""
    if os.geteuid() != 0:
        return ()
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: no way to meet a permission error")
    return ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups")


@pytest.fixture()
def shared_dir():
    """A directory another user can enter (pytest's tmp_path is private to its owner)."""
    path = Path(tempfile.mkdtemp(prefix="cslint-perm-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        for entry in path.rglob("*"):
            if entry.is_dir():
                entry.chmod(0o755)
        shutil.rmtree(path)


def _no_internal_error(done: subprocess.CompletedProcess) -> None:
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_an_output_file_that_is_a_directory_is_a_usage_error(tmp_path):
    (tmp_path / "worker.py").write_text(HAZARD, encoding="utf-8")
    (tmp_path / "reports").mkdir()
    done = _cslint(tmp_path, "check", "--no-cache", "-o", "reports", "worker.py")
    assert done.returncode == 2
    assert done.stderr.strip() == "cslint: error: reports: is a directory; --output-file needs a file name"
    (tmp_path / "a_file").write_text("", encoding="utf-8")
    done = _cslint(tmp_path, "check", "--no-cache", "-o", "a_file/report.txt", "worker.py")
    assert done.returncode == 2 and "a_file" in done.stderr and "cannot write the report" in done.stderr
    _no_internal_error(done)
    done = _cslint(tmp_path, "check", "--no-cache", "--write-baseline", "reports", "worker.py")
    assert done.returncode == 2 and done.stderr.startswith("cslint: error: reports: cannot write")
    _no_internal_error(done)


def test_an_unwritable_output_file_is_a_usage_error(shared_dir):
    prefix = _unprivileged()
    (shared_dir / "worker.py").write_text(HAZARD, encoding="utf-8")
    locked = shared_dir / "locked"
    locked.mkdir()
    (locked / "report.txt").write_text("old\n", encoding="utf-8")
    (locked / "report.txt").chmod(0o444)
    locked.chmod(0o555)
    for target in ("locked/report.txt", "locked/new.txt"):
        done = _cslint(shared_dir, "check", "--no-cache", "-o", target, "worker.py", prefix=prefix)
        assert done.returncode == 2, done.stderr
        assert target in done.stderr and "Permission denied" in done.stderr
        _no_internal_error(done)
    assert (locked / "report.txt").read_text(encoding="utf-8") == "old\n"


def test_fix_write_in_an_unwritable_directory_names_the_file_and_fixes_the_rest(shared_dir):
    prefix = _unprivileged()
    locked = shared_dir / "locked"
    locked.mkdir()
    free = shared_dir / "free"
    free.mkdir()
    for target in (locked / "kept.py", free / "fixed.py"):
        target.write_text(HAZARD, encoding="utf-8")
        target.chmod(0o666)
    free.chmod(0o777)
    locked.chmod(0o555)  # the file may be written, but no temporary can be made beside it
    done = _cslint(shared_dir, "fix", "--no-cache", "--write", "--unsafe-fixes", "locked", "free", prefix=prefix)
    assert done.returncode == 2, done.stderr
    _no_internal_error(done)
    assert f"cslint: error: locked/kept.py: cannot write in {locked}: Permission denied" in done.stderr
    assert "cslint: wrote 1 file(s)" in done.stderr
    assert (locked / "kept.py").read_text(encoding="utf-8") == HAZARD
    assert (free / "fixed.py").read_text(encoding="utf-8") != HAZARD
    assert sorted(p.name for p in locked.iterdir()) == ["kept.py"]


def test_fix_write_leaves_a_read_only_file_alone_and_says_so(tmp_path):
    (tmp_path / "kept.py").write_text(HAZARD, encoding="utf-8")
    (tmp_path / "kept.py").chmod(0o444)
    (tmp_path / "fixed.py").write_text(HAZARD, encoding="utf-8")
    done = _cslint(tmp_path, "fix", "--no-cache", "--write", "--unsafe-fixes", ".")
    assert done.returncode == 1, done.stderr  # a finding is left unfixed
    _no_internal_error(done)
    assert "kept.py:7:5: CSL102 not fixed: the file is read-only; not rewritten" in done.stderr
    assert "fixed.py:7:5: CSL102 fixed by" in done.stderr and "cslint: wrote 1 file(s)" in done.stderr
    assert (tmp_path / "kept.py").read_text(encoding="utf-8") == HAZARD
    assert stat.S_IMODE((tmp_path / "kept.py").stat().st_mode) == 0o444
    assert (tmp_path / "fixed.py").read_text(encoding="utf-8") != HAZARD
