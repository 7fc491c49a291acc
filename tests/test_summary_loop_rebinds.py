"""The summary walk reads a loop's body as a whole: a read in it may see a
value another iteration assigns later.  A name the body binds in a statement
of its own before anything in the loop reads it (``pad = size(t)`` then
``pads.append(pad)``) holds only that binding at the read: no iteration
reads what an earlier one left there.  The rank-local value the same name
takes later in the body (``pad = share``) then stays out of the element
stored before it, while every read that may see it still does: a read
before the binding, one after a binding on some ranks only, a binding that
reads the name itself, a read after the loop (no trip, a ``break``) and a
``while`` test.  The class's ``__init__`` calls no collective, so its
fields come from the summary walk."""

import textwrap

from source_findings import barrier_finding as _barrier
from source_findings import codes as _codes

_FIELD = """
    import torch.distributed as dist

    class Layout:
        def __init__(self, groups):
            self.pads = []
            pad = 0
            for g in groups:
                share = dist.get_rank()
                sizes = []
                for t in g:
    {body}
                self.pads.append(sizes)
                if share > len(g):
                    pad = share
                else:
                    pad = 0

        def step(self):
            if self.pads[0][0] > 0:
                dist.barrier()
"""


def _field(body):
    return _FIELD.replace("    {body}", textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 20))


def test_a_value_bound_anew_in_each_iteration_before_its_read_is_that_value():
    source = _field("""
        pad = t.numel() % 4
        sizes.append(pad)
    """)
    assert _codes(source) == []


def test_a_read_before_the_binding_sees_the_previous_iteration():
    source = _field("""
        sizes.append(pad)
        pad = t.numel() % 4
    """)
    assert _codes(source) == _barrier(source)


def test_a_binding_on_some_ranks_after_the_first_still_reaches_the_read():
    source = _field("""
        pad = t.numel() % 4
        if share == 0:
            pad = share
        sizes.append(pad)
    """)
    assert _codes(source) == _barrier(source)


def test_a_value_read_in_its_own_binding_is_carried_round():
    source = _field("""
        pad = pad + t.numel()
        sizes.append(pad)
    """)
    assert _codes(source) == _barrier(source)


_AFTER = """
    import torch.distributed as dist

    class Layout:
        def __init__(self, groups):
            share = dist.get_rank()
            last = share
            for g in groups:
    {body}
            self.last = last

        def step(self):
            if self.last > 0:
                dist.barrier()
"""


def _after(body):
    return _AFTER.replace("    {body}", textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 16))


def test_a_read_after_the_loop_still_sees_the_value_before_it():
    # no trip: ``last`` keeps the rank
    source = _after("""
        last = len(g)
    """)
    assert _codes(source) == _barrier(source)


def test_a_read_after_a_break_sees_the_binding_it_left():
    source = _after("""
        last = len(g) + share
        if len(g) > 2:
            break
        last = 0
    """).replace("last = share", "last = 0")
    assert _codes(source) == _barrier(source)


def test_a_while_loop_reading_the_name_in_its_test_is_left_as_it_was():
    source = """
        import torch.distributed as dist

        class Queue:
            def __init__(self, items):
                item = dist.get_rank()
                out = []
                while item:
                    item = len(items)
                    out.append(item)
                self.out = out

            def step(self):
                if self.out[0]:
                    dist.barrier()
    """
    assert _codes(source) == _barrier(source)
