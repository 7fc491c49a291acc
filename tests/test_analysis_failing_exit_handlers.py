"""A handler that ends its process with a failure status is no rank-local
path (issue 14, uniform-exception: SGLang's diffusion worker exits with
``os._exit(1)`` on a fatal forward, re-raises an out-of-memory error, and lets
anything else leave through its ``finally``).

A launcher sees a worker that exits with a failure status as it sees one
that crashed, and tears the job down: ``os._exit(1)``, ``sys.exit(2)``,
``sys.exit("message")`` (status 1) and ``os.abort()`` at the end of a handler
end the job as a re-raise does (``exits.exits_failing``), so the ``try`` body
gets no exception edge into that handler.  An exit with status 0, with none,
or with a status a variable holds may be the clean way out, after which a
launcher waits for the other workers: that handler still leaves the
collective behind.  Each VALID shape sits beside an INVALID one that must
still be reported."""

from __future__ import annotations

import textwrap

from cslint.api import check_paths

SOURCE = """
    import os
    import sys

    import torch.distributed as dist


    class Fatal(Exception):
        pass


    def serve(group, pipe, t):
        try:
            pipe.send("ready")
            dist.all_reduce(t, group=group)  # VALID: the fatal handler exits failing, the other re-raises
        except Fatal:
            os._exit(1)
        except MemoryError:
            raise
        finally:
            print("worker done")


    def serve_with_message(group, pipe, t):
        try:
            pipe.send("ready")
            dist.all_reduce(t, group=group)  # VALID: a message exit ends with status 1
        except OSError:
            print("parent gone")
            sys.exit("parent gone")


    def serve_aborting(group, pipe, t):
        try:
            pipe.send("ready")
            dist.all_reduce(t, group=group)  # VALID: abort ends the process with a signal
        except OSError:
            os.abort()


    def serve_cleanly(group, pipe, t):
        try:
            pipe.send("ready")
            dist.all_reduce(t, group=group)  # INVALID: status 0 is a clean exit the launcher waits after
        except OSError:
            os._exit(0)


    def serve_bare_exit(group, pipe, t):
        try:
            pipe.send("ready")
            dist.all_reduce(t, group=group)  # INVALID: sys.exit() is status 0
        except OSError:
            sys.exit()


    def serve_with_code(group, pipe, t, code):
        try:
            pipe.send("ready")
            dist.all_reduce(t, group=group)  # INVALID: the status is the caller's
        except OSError:
            sys.exit(code)


    def serve_then_exit(group, pipe, t):
        try:
            pipe.send("ready")
            dist.all_reduce(t, group=group)  # INVALID: only some runs exit
        except OSError as e:
            if e.errno:
                sys.exit(1)
"""


def _marked(source: str, word: str) -> list:
    return sorted(i for i, line in enumerate(source.splitlines(), 1) if f"# {word}:" in line)


def test_a_handler_that_exits_failing_swallows_nothing(tmp_path):
    source = textwrap.dedent(SOURCE)
    (tmp_path / "worker.py").write_text(source)
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    flagged = sorted({f.line for f in findings if f.code == "CSL104"})
    assert _marked(source, "VALID")
    assert flagged == _marked(source, "INVALID")
