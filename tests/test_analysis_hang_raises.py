"""A ``raise`` or a failing ``assert`` nothing catches, on a rank-local condition
(issues 12 and 14).

With ``unhandled-exceptions = "crash"`` (the default) such an exception ends
the process and the launcher tears the job down: a crash, not a hang, so the
test above it decides nothing.  With ``"hang"`` (caught upstream, or an MPI
launcher that leaves the other ranks running) the ranks that raise leave
while the others wait in the next collective: the raise is an exit like
``return`` (CSL102, saying which case applies), in a function walked in
depth as in one the summary walk reads.  A raise on a test every rank
agrees on (an argument check) stays silent, and so does an ``assert`` that
holds wherever it is reached (recorded.py)."""

import textwrap

from cslint.api import check_source
from cslint.config import Settings

HANG = Settings(unhandled_exceptions="hang")


def _found(source, settings=None):
    return sorted((f.line, f.code) for f in check_source(textwrap.dedent(source), settings=settings,
                                                          report="per-site").findings)


def _marked(source):
    return [(n, text.split("# reported ")[1].split(":")[0])
            for n, text in enumerate(textwrap.dedent(source).splitlines(), 1) if "# reported " in text]


STEPS = """
    import torch.distributed as dist


    def open_segment(path):
        return open(path, "rb")


    def refuse_on_leader(t):
        if dist.get_rank() == 0:
            raise RuntimeError("leader has no segment")
        dist.all_reduce(t)  # reported CSL102: the leader raises, the others wait


    def refuse_without_segment(t, path):
        segment = None
        try:
            segment = open_segment(path)
        except OSError:
            pass
        if segment is None:
            raise RuntimeError("no segment here")
        dist.all_reduce(t)  # reported CSL102: the ranks whose open failed raise


    def insist_on_segment(t, path):
        segment = None
        try:
            segment = open_segment(path)
        except OSError:
            pass
        assert segment is not None
        dist.all_reduce(t)  # reported CSL102: the assert fails where the open did


    def check_arguments(t, world_size):
        if world_size < 2:
            raise ValueError("needs two ranks")
        assert t.dim() == 1
        dist.all_reduce(t)


    def settle_record(t, path):
        failure = None
        segment = None
        try:
            segment = open_segment(path)
        except OSError as error:
            failure = error
        if failure is None:
            assert segment is not None
            dist.all_reduce(t)  # reported CSL101: the failure record's own test
"""


def test_an_uncaught_raise_on_a_rank_local_test_is_an_exit_under_hang():
    assert _found(STEPS, HANG) == _marked(STEPS)
    messages = [f.message for f in check_source(textwrap.dedent(STEPS), settings=HANG, report="per-site").findings
                if f.function in ("refuse_on_leader", "insist_on_segment")]
    assert len(messages) == 2
    assert all('unhandled-exceptions = "hang": the exception leaves the ranks that raise it' in m for m in messages)
    assert "is skipped on ranks where `assert segment is not None` fails, which differs" in messages[1]


def test_an_uncaught_raise_is_a_crash_by_default():
    # the launcher tears the job down: only the failure record's own test stays
    found = _found(STEPS)
    assert found == [_marked(STEPS)[-1]]
    assert all("unhandled-exceptions" not in f.message
               for f in check_source(textwrap.dedent(STEPS), report="per-site").findings)


SUMMARISED = """
    import torch.distributed as dist


    class Buffer:
        def __init__(self, rank, capacity):
            self.rank = rank
            self.capacity = capacity
            self.checked = None

        def check(self, batch):
            mine = batch[self.rank::2]
            if len(mine) > self.capacity:
                raise RuntimeError("local share exceeds the buffer")
            self.checked = batch

        def gather_checked(self, out):
            if self.checked is None:
                return None
            dist.all_gather_object(out, len(self.checked))  # reported CSL102: a rank that raised kept None
"""


def test_what_follows_a_raising_arm_is_decided_by_its_test_under_hang_in_a_summary():
    # ``check`` reaches no collective (the summary walk): under "hang" the
    # rank whose share is too large leaves it and may go on (caught
    # upstream) with ``checked`` still None; by default it crashed
    assert _found(SUMMARISED, HANG) == _marked(SUMMARISED)
    assert _found(SUMMARISED) == []


LOOP = """
    import torch.distributed as dist


    def serve(t, cache):
        while True:
            if dist.get_rank() == 0 and cache.full():
                raise RuntimeError("cache full")
            dist.all_reduce(t)


    def drain(t, queue):
        while True:
            if dist.get_rank() == 0 and not queue:
                break
            dist.all_reduce(t)
"""


def test_an_exception_out_of_an_event_loop_is_agreed_as_soon_as_one_rank_must_raise():
    # a rank leaving an event loop because it is done waits, idle, until
    # every rank is (the consensus ``all``); an exception does not wait:
    # the ranks raise together once one must (the consensus ``any``)
    found = {f.function: f for f in check_source(textwrap.dedent(LOOP), settings=HANG, report="per-site").findings}
    assert found["serve"].code == "CSL102" and not found["serve"].fix_facts.leaves_unbounded_loop
    assert found["drain"].code == "CSL102" and found["drain"].fix_facts.leaves_unbounded_loop


CALLEE = """
    import torch.distributed as dist


    def check_local(batch):
        if dist.get_rank() == 0 and not batch:
            raise RuntimeError("empty on the leader")


    def check_asserted(batch):
        assert batch or dist.get_rank() != 0


    def check_config(size):
        if size < 2:
            raise ValueError("needs two")


    def step(t, batch, size):
        check_config(size)
        check_local(batch)
        dist.all_reduce(t)  # reported CSL104: check_local raises on the leader alone


    def step_asserted(t, batch):
        check_asserted(batch)
        dist.all_reduce(t)  # reported CSL104: the assert fails on the leader alone


    def step_configured(t, size):
        check_config(size)
        dist.all_reduce(t)
"""


def test_a_function_of_the_file_that_raises_on_its_own_rank_local_test_fails_where_it_says_under_hang():
    # the callee's own tests decide (escapes.py): a raise on the rank leaves
    # the leader; one on an argument every rank passes alike leaves none
    assert _found(CALLEE, HANG) == _marked(CALLEE)
    assert _found(CALLEE) == []


CONSTRUCTED = """
    import glob
    import os

    import torch.distributed as dist


    class ShardList:
        def __init__(self, files):
            self.files = files
            self.check_files()

        def check_files(self):
            assert len(self.files) > 0


    class Settings:
        def __init__(self, size):
            if size < 2:
                raise ValueError("needs two")
            self.size = size


    class Plain:
        def __init__(self, files):
            self.files = files


    def restore(folder, t):
        shards = ShardList(sorted(glob.glob(os.path.join(folder, "*.pt"))))
        dist.all_reduce(t)  # reported CSL104: the constructor's assert fails where this rank sees no file
        return shards


    def restore_configured(t, size):
        Settings(size)
        dist.all_reduce(t)


    def restore_plain(folder, t):
        Plain(glob.glob(os.path.join(folder, "*.pt")))
        dist.all_reduce(t)
"""


def test_a_class_of_the_file_whose_constructor_raises_on_a_rank_local_test_fails_where_it_says_under_hang():
    # a call of the class runs its own __init__ (escapes.py): an assert in a method it calls on a list this rank
    # globbed leaves the ranks that see no file; a check of an argument every rank passes alike, or a class whose
    # __init__ cannot fail, leaves none
    assert _found(CONSTRUCTED, HANG) == _marked(CONSTRUCTED)
    assert _found(CONSTRUCTED) == []
