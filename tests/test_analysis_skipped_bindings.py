"""A failure in a ``try`` body leaves the body's later bindings undone
(``analysis/skipped.py``): where a handler falls through, the code after
the ``try`` reads the earlier value on the ranks that failed and the
body's on the others.  Each VALID shape sits beside the INVALID one that
must be reported.
"""

import textwrap

from cslint.api import check_paths

HEADER = """
    import torch.distributed as dist


    def open_segment(path):
        return open(path, "rb")


    def describe(path):
        return {"path": path}
"""


def _findings(tmp_path, body: str):
    path = tmp_path / "mod.py"
    path.write_text(textwrap.dedent(HEADER) + textwrap.dedent(body))
    return [(f.code, f.line, f.function) for f in check_paths([str(path)], cache=False).findings]


def test_a_binding_the_failure_skips_differs_after_the_try(tmp_path):
    found = _findings(tmp_path, """

        def attach(t, path):
            segment = None
            try:
                segment = open_segment(path)
            except OSError:
                pass
            if segment is None:
                return
            dist.all_reduce(t)
    """)
    assert [(code, function) for code, _, function in found] == [("CSL102", "attach")]


def test_an_earlier_failure_of_the_body_skips_the_binding_too(tmp_path):
    found = _findings(tmp_path, """

        def attach(t, path):
            info = None
            try:
                open_segment(path).close()
                info = describe(path)
            except OSError:
                pass
            if info is None:
                return
            dist.all_reduce(t)
    """)
    assert [(code, function) for code, _, function in found] == [("CSL102", "attach")]


def test_a_handler_that_breaks_out_of_the_loop_still_meets_the_others(tmp_path):
    # ``break`` leaves the loop, not the function: the code after the loop
    # reads what the failure left, as after a handler that falls through
    found = _findings(tmp_path, """

        def attach(t, paths):
            segment = None
            for path in paths:
                try:
                    segment = open_segment(path)
                except OSError:
                    break
            if segment is None:
                return
            dist.all_reduce(t)
    """)
    assert [(code, function) for code, _, function in found] == [("CSL102", "attach")]


def test_a_handler_that_leaves_the_function_skips_nothing_after_it(tmp_path):
    # the ranks whose open failed are gone (their own exit is reported where
    # the collective is skipped); the ones still here all bound ``segment``
    found = _findings(tmp_path, """

        def attach(t, path):
            segment = None
            try:
                segment = open_segment(path)
            except OSError:
                return
            if segment is None:
                return
            dist.all_reduce(t)
    """)
    assert [code for code, _, _ in found] == ["CSL104"]


def test_a_name_the_code_after_the_try_binds_again_is_alike(tmp_path):
    found = _findings(tmp_path, """

        def attach(t, path):
            segment = None
            try:
                segment = open_segment(path)
                segment.close()
            except OSError:
                pass
            segment = describe(path)
            if segment is None:
                return
            dist.all_reduce(t)
    """)
    assert found == []


def test_a_body_that_cannot_fail_on_one_rank_skips_nothing(tmp_path):
    found = _findings(tmp_path, """

        def attach(t, path):
            info = None
            try:
                info = describe(path)
            except KeyError:
                pass
            if info is None:
                return
            dist.all_reduce(t)
    """)
    assert found == []


def test_a_name_read_only_inside_the_body_keeps_its_reading(tmp_path):
    # the ranks reading ``size`` inside the body all got past its binding:
    # only the skip of the collective itself (CSL104) is reported, not a
    # divergent test of ``size``
    found = _findings(tmp_path, """

        def attach(t, path):
            try:
                size = len(describe(path))
                if size > 1:
                    t = t * size
                open_segment(path).close()
            except OSError:
                pass
            dist.all_reduce(t)
    """)
    assert found == []


def test_a_failure_kept_in_a_name_speaks_for_the_skipped_binding(tmp_path):
    # the record, not the skipped binding, carries the failure: a test of
    # the record is reported, and agreeing on it first settles both
    found = _findings(tmp_path, """

        def attach(t, path):
            segment = None
            failure = None
            try:
                segment = open_segment(path)
            except OSError as error:
                failure = error
            if failure is not None:
                return
            dist.all_reduce(t)


        def attach_agreed(t, path, group):
            segment = None
            failure = None
            try:
                segment = open_segment(path)
            except OSError as error:
                failure = error
            failed = [None]
            dist.all_gather_object(failed, failure, group=group)
            if any(f is not None for f in failed):
                raise RuntimeError("a rank could not open the segment")
            if segment is None:
                return
            dist.all_reduce(t, group=group)
    """)
    assert [(code, function) for code, _, function in found] == [("CSL102", "attach")]


def test_a_binding_of_the_else_clause_is_skipped_by_every_failure_of_the_body(tmp_path):
    # the ``else`` clause runs only where nothing in the body raised: the
    # ranks whose open failed keep None
    found = _findings(tmp_path, """

        def attach(t, path):
            segment = None
            try:
                handle = open_segment(path)
            except OSError:
                pass
            else:
                segment = handle
            if segment is None:
                return
            dist.all_reduce(t)

    """)
    assert [(code, function) for code, _, function in found] == [("CSL102", "attach")]
def test_a_failure_kept_as_a_message_speaks_for_the_skipped_binding(tmp_path):
    # a handler that keeps a message made from what it caught (never None)
    # records the failure as ``failure = error`` does: a receiver that starts
    # each request in a try, gathers the per-rank messages and skips the
    # request on every rank when any is set queues the same requests
    # everywhere; without the gather the message still parts the ranks
    body = """

        class Pending:
            def __init__(self, path):
                self.handle = open(path, "rb")


        class Receiver:
            def __init__(self, group, size):
                self.group = group
                self.size = size
                self.pending = []

            def admit(self, paths):
                for path in paths:
                    pending = None
                    message = None
                    try:
                        pending = Pending(path)
                    except Exception as error:
                        message = MESSAGE
                    messages = [message] if self.size <= 1 else GATHERED
                    failed = [rank for rank, text in enumerate(messages) if text is not None]
                    if failed:
                        continue
                    self.pending.append(pending)

            def step(self, t):
                if self.pending[0].handle is not None:
                    dist.all_reduce(t, group=self.group)
    """
    gathered = "self.group.all_gather_object(message)"
    for message in ('f"{type(error).__name__}: {error}"', "str(error)", "repr(error)"):
        made = body.replace("MESSAGE", message)
        assert _findings(tmp_path, made.replace("GATHERED", gathered)) == [], message
        assert [(code, function) for code, _, function in _findings(tmp_path, made.replace("GATHERED", "[message]"))] \
            == [("CSL101", "Receiver.step")], message
