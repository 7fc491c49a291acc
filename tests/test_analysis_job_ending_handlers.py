"""A handler that ends the whole job is no rank-local path (issue 14,
handler-ends-job: SGLang's scheduler process signals its parent to shut the
server down when building the scheduler or reporting to the parent fails).

A rank-local exception is a hazard only where the rank that caught it goes
on while its peers wait in a collective it skipped.  A handler that signals
the process which started this one to end (``os.kill(os.getppid(),
SIGTERM)``, ``psutil.Process().parent().send_signal(SIGQUIT)``) has the
launcher tear every rank down, as a re-raising handler lets the process die
(``exits.ends_job``): its ``try`` body gets no exception edge into it.  A
handler that only logs, or sends a signal that does not end its target,
still swallows the failure.  Each VALID shape sits beside the INVALID one
that must still be reported."""

from __future__ import annotations

import textwrap

from cslint.api import check_paths

SOURCE = """
    import os
    import signal

    import psutil
    import torch.distributed as dist


    class Server:
        def __init__(self, group):
            self.group = group

        def serve(self):
            while True:
                dist.barrier(group=self.group)


    def run_server(group, pipe):
        parent = psutil.Process().parent()
        try:
            server = Server(group)
            pipe.send("ready")
            server.serve()  # VALID: the handler has the parent end the job
        except Exception:
            parent.send_signal(signal.SIGQUIT)


    def run_server_by_pid(group, pipe):
        try:
            server = Server(group)
            pipe.send("ready")
            server.serve()  # VALID: the handler has the parent end the job
        except Exception:
            print("server failed")
            os.kill(os.getppid(), signal.SIGTERM)


    def run_server_logging(group, pipe):
        try:
            server = Server(group)
            pipe.send("ready")
            server.serve()  # INVALID: the handler only reports it
        except Exception:
            print("server failed")


    def run_server_nudging(group, pipe):
        parent = psutil.Process().parent()
        try:
            server = Server(group)
            pipe.send("ready")
            server.serve()  # INVALID: a user signal ends nothing by itself
        except Exception:
            parent.send_signal(signal.SIGUSR1)


    def run_server_maybe(group, pipe, strict):
        parent = psutil.Process().parent()
        try:
            server = Server(group)
            pipe.send("ready")
            server.serve()  # INVALID: only some runs signal the parent
        except Exception:
            if strict:
                parent.send_signal(signal.SIGQUIT)
"""


def _marked(source: str, word: str) -> list:
    return sorted(i for i, line in enumerate(source.splitlines(), 1) if line.rstrip().endswith(word)
                  or f"# {word}:" in line)


def test_a_handler_that_has_the_parent_end_the_job_swallows_nothing(tmp_path):
    source = textwrap.dedent(SOURCE)
    (tmp_path / "server.py").write_text(source)
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    flagged = sorted({f.line for f in findings if f.code == "CSL104"})
    assert _marked(source, "VALID")
    assert flagged == _marked(source, "INVALID")
