"""A function whose every ``return`` but one hands back None (or a tuple of
Nones) tells its caller which way it went only by the result's None-ness
(issue 14): past the caller's ``if x is None: break`` the one return of a
value ran, so the test that chose it no longer reaches what ``x`` holds.
The None test itself still carries it (a rank that finds None leaves where
the others go on), and a value that differs by itself still differs."""

import textwrap

from cslint.api import check_source

LOOP = """
    import time

    import torch.distributed as dist


    class Loop:
        def __init__(self, deadline):
            self.deadline = deadline

        @property
        def should_stop(self):
            return time.monotonic() > self.deadline

        def _prepare(self):
            dist.barrier()
            if self.should_stop:
                return None, None
            batch = {value}
            stats = 3
            return batch, stats

        def run(self):
            while True:
                batch, stats = self._prepare()
                if batch is None:
                    break
                if batch > 1:
                    dist.all_reduce(stats)
"""

WHOLE = """
    import time

    import torch.distributed as dist


    def _next(deadline, pairs):
        dist.barrier()
        if time.monotonic() > deadline:
            return {stop}
        if not pairs:
            return None
        return dist.get_world_size()


    def serve(deadline, pairs, t):
        while True:
            size = _next(deadline, pairs)
            if size is None:
                break
            if size > 1:
                dist.all_reduce(t)
"""

TWO_VALUES = """
    import time

    import torch.distributed as dist


    def _next(deadline):
        dist.barrier()
        if time.monotonic() > deadline:
            return None
        if time.monotonic() > deadline / 2:
            return 1
        return dist.get_world_size()


    def serve(deadline, t):
        while True:
            size = _next(deadline)
            if size is None:
                break
            if size > 1:
                dist.all_reduce(t)
"""


def _found(source):
    return sorted((f.line, f.code) for f in check_source(textwrap.dedent(source), report="per-site").findings)


def _line(source, text):
    return next(i for i, line in enumerate(textwrap.dedent(source).splitlines(), 1) if text in line)


def test_past_the_none_test_the_chosen_value_holds_no_trace_of_the_choice():
    source = LOOP.format(value="dist.get_world_size()")
    found = _found(source)
    assert (_line(source, "dist.all_reduce"), "CSL101") not in found
    assert (_line(source, "self._prepare()"), "CSL102") in found  # the break on None still differs: a rank that stopped leaves alone


def test_a_value_that_differs_by_itself_still_differs_past_the_none_test():
    source = LOOP.format(value="dist.get_rank()")
    assert (_line(source, "dist.all_reduce"), "CSL101") in _found(source)


def test_a_whole_result_that_is_none_on_every_other_way():
    source = WHOLE.format(stop="None")
    assert (_line(source, "dist.all_reduce"), "CSL101") not in _found(source)


def test_a_tuple_of_nones_is_not_none_so_the_whole_result_keeps_the_choice():
    source = WHOLE.format(stop="None, None")
    assert (_line(source, "dist.all_reduce"), "CSL101") in _found(source)


def test_two_returns_of_a_value_keep_the_test_choosing_between_them():
    assert (_line(TWO_VALUES, "dist.all_reduce"), "CSL101") in _found(TWO_VALUES)


def test_a_loop_right_past_the_none_test_counts_what_the_value_holds():
    # the for loop's entry reads the not-None edge as the loop header does (dataflow._note_loop_entry)
    counted = LOOP.replace("if batch > 1:", "for _ in range(batch):")
    assert "range(batch)" in counted
    agreed, own = counted.format(value="dist.get_world_size()"), counted.format(value="dist.get_rank()")
    assert (_line(agreed, "dist.all_reduce"), "CSL103") not in _found(agreed)
    assert (_line(own, "dist.all_reduce"), "CSL103") in _found(own)
