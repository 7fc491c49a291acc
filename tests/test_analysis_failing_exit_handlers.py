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


#: a rank-local ``raise`` inside a ``try`` whose handlers all end the process (issue 12): nothing catches the
#: raise and goes on, so the arm that raises is a crash, as it is outside any ``try``; each VALID shape sits
#: beside an INVALID one where something does go on
RAISING_ARMS = """
    import os
    import sys

    import torch.distributed as dist


    def load(path, group):
        try:
            if not os.path.exists(path):
                raise FileNotFoundError(path)
            dist.barrier(group=group)  # VALID: the only handler ends the process
        except BaseException:
            os._exit(1)
        return path


    def load_exiting(path, group):
        try:
            if not os.path.exists(path):
                raise FileNotFoundError(path)
            dist.barrier(group=group)  # INVALID: sys.exit raises SystemExit, which a caller may catch
        except Exception:
            print("cannot load")
            sys.exit(1)
        return path


    def load_logging(path, group):
        try:
            if not os.path.exists(path):
                raise FileNotFoundError(path)
            dist.barrier(group=group)  # INVALID: the handler goes on after the try
        except BaseException:
            print("cannot load")
        return path


    def load_in_outer(path, group):
        try:
            try:
                if not os.path.exists(path):
                    raise FileNotFoundError(path)
                dist.barrier(group=group)  # INVALID: the inner handler ends, the outer one goes on
            except KeyError:
                os._exit(1)
        except OSError:
            pass
        return path


    def load_reraising(path, group):
        try:
            if not os.path.exists(path):
                raise FileNotFoundError(path)
            dist.barrier(group=group)  # INVALID: a caller in another module may catch what the handler raises
        except OSError as error:
            raise RuntimeError(str(error)) from error
        return path


    def load_marking(path, group):
        done = False
        try:
            if not os.path.exists(path):
                raise FileNotFoundError(path)
            dist.barrier(group=group)  # VALID: no handler, and the finally calls nothing
        finally:
            done = True
        return done


    def load_then_publish(path, group, flag):
        try:
            if not os.path.exists(path):
                raise FileNotFoundError(path)
            dist.barrier(group=group)  # INVALID: the raising rank runs the finally's broadcast before it ends
        finally:
            dist.broadcast(flag, src=0, group=group)
        return path


    def load_or_default(path, group):
        try:
            if not os.path.exists(path):
                raise FileNotFoundError(path)
            dist.barrier(group=group)  # INVALID: the finally's return swallows the raise
        finally:
            return path


    def load_clean_exit(path, group):
        try:
            if not os.path.exists(path):
                raise FileNotFoundError(path)
            dist.barrier(group=group)  # INVALID: status 0 is a clean exit the launcher waits after
        except BaseException:
            os._exit(0)
        return path
"""


def test_a_raise_whose_every_handler_ends_the_process_is_a_crash(tmp_path):
    source = textwrap.dedent(RAISING_ARMS)
    (tmp_path / "loader.py").write_text(source)
    findings = check_paths([str(tmp_path)], cache=False, jobs=1, report="per-site").findings
    flagged = sorted({f.line for f in findings if f.code in ("CSL102", "CSL104")})
    assert _marked(source, "VALID")
    assert flagged == _marked(source, "INVALID")
