"""A method found by its name alone must bind the call's arguments (issue 14).

Where nothing tells what a receiver is, a call ``x.name(...)`` is followed to
the tree's one method of that name.  A call that method cannot take, as Python
binds arguments, is some other object's method of the same name: a keyword it
has no parameter for (a metrics writer's ``log(row, commit=True)`` is not a
timer table's ``log(names, normalizer=1.0)``), a required parameter the call
leaves out (a device event's ``record(stream)`` is not a stream's
``record(output, update)``), a positional argument for a keyword-only
parameter, or a parameter given twice.  That holds for a receiver nothing is
known about, for a field nothing types and for an attribute of a typed object
whose own type is unknown alike.  A field a method assigns with a declared
type (``self.scheduler: SchedulerBase = make()``) holds an object of that
type, as one the class body declares does."""

import textwrap

import pytest

from cslint.api import check_source


def _lines(source, **kw):
    return sorted(f.line for f in check_source(textwrap.dedent(source), report="per-site", **kw).findings)


TIMERS = """
    import torch.distributed as dist


    class Timers:
        def log(self, names, rank=None, normalizer=1.0):
            if len(names) == 0:
                return None
            dist.barrier()


    def local_names():
        return [] if dist.get_rank() == 0 else ["step"]
"""

LOGGED = {
    "a receiver nothing is known about": """
    def report(writer):
        writer.log(local_names(), {arguments})
""",
    "a field nothing types": """
    class Engine:
        def __init__(self, writer):
            self.writer = writer

        def step(self):
            self.writer.log(local_names(), {arguments})
""",
    "an untyped field of a typed object": """
    class Context:
        def __init__(self, writer):
            self.writer = writer


    class Engine:
        def __init__(self, writer):
            self.context = Context(writer)

        def step(self):
            self.context.writer.log(local_names(), {arguments})
""",
}


@pytest.mark.parametrize("receiver", sorted(LOGGED))
def test_a_keyword_the_method_has_no_parameter_for_rules_it_out(receiver):
    caller = textwrap.dedent(LOGGED[receiver])
    source = textwrap.dedent(TIMERS) + "\n\n" + caller
    assert _lines(source.replace("{arguments}", "commit=True")) == []
    assert _lines(source.replace("{arguments}", "normalizer=2.0")) == [9]  # it may be Timers.log
    assert _lines(source.replace("{arguments}", "**options")) == [9]  # the mapping may bind it


RECORD = """
    import torch.distributed as dist


    class Stream:
        def record(self, output, update, *, declared=None):
            dist.all_reduce(output)


    def mark(event, stream, t):
        if dist.get_rank() == 0:
            event.record(stream)                  # `update` left out: a device event's
        if dist.get_rank() == 0:
            event.record(t, 1, 2)                 # `declared` is keyword-only
        if dist.get_rank() == 0:
            event.record(t, output=t)             # `output` given twice
        if dist.get_rank() == 0:
            event.record(t, 1, declared=2)        # reported: it binds
        if dist.get_rank() == 0:
            event.record(t, update=1)             # reported
        if dist.get_rank() == 0:
            event.record(output=t, update=1)      # reported
        if dist.get_rank() == 0:
            event.record(*t)                      # reported: the unpacked ones may bind it
"""


def test_a_required_parameter_left_out_or_one_bound_the_wrong_way_rules_it_out():
    assert _lines(RECORD) == [18, 20, 22, 24]


DECLARED_FIELD = """
    import torch.distributed as dist
    from vendor.sched import SchedulerBase


    class Engine:
        def has_unfinished_requests(self):
            flag = dist.get_rank() == 0
            dist.all_reduce(flag)
            return flag


    class Core:
        def __init__(self, config):
            Scheduler = config.scheduler_cls()
            self.scheduler{annotation} = Scheduler(config)

        def step(self):
            if dist.get_rank() == 0:
                return
            self.scheduler.has_unfinished_requests()
"""


def test_a_field_declared_where_a_method_assigns_it_has_the_declared_class():
    # ``self.scheduler: SchedulerBase = Scheduler(config)``: a library class, never Engine
    assert _lines(DECLARED_FIELD.replace("{annotation}", ": SchedulerBase")) == []
    # undeclared, the call goes by its name alone; declared as the tree's own class, to that class
    assert _lines(DECLARED_FIELD.replace("{annotation}", "")) == [21]
    assert _lines(DECLARED_FIELD.replace("{annotation}", ': "Engine"')) == [21]
