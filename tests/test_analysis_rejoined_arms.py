"""Names bound past an ``if`` whose arms either fall through or leave the
function (issue 14, complementary-role-arms).

A rank past such an ``if`` went through one arm or the other and fell
through; the ranks an exit inside an arm sent out (a ``return``, a ``raise``
or, under ``unhandled-exceptions = "hang"``, a failing ``assert`` nothing
catches) are gone from the function and never read its local names again.
So the test that chose the arm, and the exit's own test, tell apart none of
the ranks reading what is bound past the ``if``: a count computed (or broadcast)
there is the same on every rank that reads it, and the exit is reported once, as the
early exit it is.  A name bound inside an arm, or an ``if`` inside a ``try``
whose handler keeps the failing ranks in the function, still differs.  Each
shape that must stay quiet sits beside one that must still be reported."""

import textwrap

from cslint.api import check_source

ASSERTED = """
    class Engine:
        def __init__(self, dist, sampler, model):
            self.dist = dist
            self.sampler = sampler
            self.model = model
            self.pending = []

        def _sample(self, batch):
            try:
                return self.sampler.sample(batch)
            except Exception:
                return None

        def _finish(self, item):
            self.dist.allgather(item)

        def _finish_all(self, count):
            done = 0
            while done < count:
                self._finish(self.pending.pop())
                done += 1

        def serve(self):
            while True:
                batch = self.model.next_batch()
                if not self.dist.is_last_pp_rank:
                    state = self.model.forward(batch)
                else:
                    state = self._sample(batch)
                    assert state is not None
                count = self.dist.broadcast(len(batch), root=0)  # reported CSL102: the assert fails where sampling did
                if count > 2:
                    self.dist.allgather(batch)  # reported CSL102: the same assert, not the count
                self._finish_all(count)  # reported CSL102: the same assert

        def serve_bound_in_arm(self):
            while True:
                batch = self.model.next_batch()
                count = 0
                if not self.dist.is_last_pp_rank:
                    count = self.dist.broadcast(len(batch), root=0)  # reported CSL101: the stages before the last
                else:
                    state = self._sample(batch)
                    assert state is not None
                if count > 2:
                    self.dist.allgather(batch)  # reported CSL101: the last stage kept 0

        def serve_caught(self):
            while True:
                batch = self.model.next_batch()
                try:
                    if not self.dist.is_last_pp_rank:
                        state = self.model.forward(batch)
                    else:
                        state = self._sample(batch)
                        assert state is not None
                except AssertionError:
                    state = None
                count = self.dist.broadcast(len(batch), root=0)
                if state is not None and count > 2:
                    self.dist.allgather(batch)  # reported CSL101: the caught failure stays in the function
"""

RETURNED = """
    import os

    import torch.distributed as dist


    def serve(batches, path, model):
        for batch in batches:
            if dist.get_rank() % 2:
                shard = model.forward(batch)
            else:
                shard = path if os.path.exists(path) else None
                if shard is None:
                    return None
            count = len(batch)
            if count > 2:
                dist.all_reduce(batch)  # reported CSL102: the ranks without a shard returned, not the count
            dist.barrier()  # reported CSL102: the same return


    def serve_bound_in_arm(batches, path, model):
        for batch in batches:
            count = 0
            if dist.get_rank() % 2:
                count = len(batch)
            else:
                shard = path if os.path.exists(path) else None
                if shard is None:
                    return None
            if count > 2:
                dist.all_reduce(batch)  # reported CSL101: only the odd ranks set the count


    def serve_breaking(batches, path, model):
        for batch in batches:
            if dist.get_rank() % 2:
                shard = model.forward(batch)
            else:
                shard = path if os.path.exists(path) else None
                if shard is None:
                    break
            count = len(batch)
        if count > 2:
            dist.all_reduce(batch)  # reported CSL101: the ranks that broke out kept an earlier count
"""


def _found(source, presets=None):
    return sorted((f.line, f.code) for f in check_source(textwrap.dedent(source), presets=presets,
                                                          report="per-site").findings)


def _marked(source):
    return [(n, text.split("# reported ")[1].split(":")[0])
            for n, text in enumerate(textwrap.dedent(source).splitlines(), 1) if "# reported " in text]


def test_what_is_bound_past_a_stage_arm_with_an_uncaught_assert_is_read_alike():
    assert _found(ASSERTED, presets=["torch_distributed", "tensorrt_llm"]) == _marked(ASSERTED)


def test_what_is_bound_past_an_arm_that_returns_inside_is_read_alike():
    assert _found(RETURNED) == _marked(RETURNED)
