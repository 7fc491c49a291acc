"""A field a method's callers set before they call it, and the calls on self
that keep a field's earlier value or not (issue 14, setfields.py and
selfcalls.py): a private method called only as ``self.m()`` by methods that
set the field reads what they set, not every value the class ever stored
(a flag loaded from this rank's checkpoint); a field set by a call that sets
it first stays set past later calls that do not write it; ``getattr(self,
"x", default)`` hands ``self`` nowhere; a callable a constructor was handed
and keeps in a field is another object."""

import textwrap

from cslint.api import check_source


def _lines(source):
    return sorted(f.line for f in check_source(textwrap.dedent(source), report="per-site").findings)


_LOADED = """
    import torch
    import torch.distributed as dist


    class Scaler:
        def __init__(self, group, timer):
            self.group = group
            self.timer = timer
            self.overflow = False
            self.pending = []
            self.level = 0

        def load(self, folder):
            state = torch.load(f"{folder}/rank_{dist.get_rank()}.pt")
            self.overflow = state["overflow"]

        def check(self, grads):
            found = torch.zeros(1)
            for g in grads:
                found += g.isinf().any()
            dist.all_reduce(found, group=self.group)
            self.overflow = bool(found.item())
"""


def test_a_private_method_reads_what_its_callers_set():
    assert _lines(_LOADED + """
        def _settle(self):
            if self.overflow:
                self.pending = []
                dist.barrier(group=self.group)
            return self.overflow

        def _drop(self):
            if self.overflow:
                self.pending = []

        def check_and_settle(self, grads):
            self.overflow = False
            self.check(grads)
            self._drop()
            return self._settle()

        def step(self, grads):
            self.check_and_settle(grads)
            if not self.overflow and len(grads) > 4:
                self.overflow = True
            self._settle()
            for item in self.pending:
                dist.all_reduce(item, group=self.group)
    """) == []


def test_a_method_called_otherwise_reads_the_whole_field():
    assert _lines(_LOADED + """
        def _settle(self):
            if self.overflow:
                dist.barrier(group=self.group)                             # reported

        def _drop(self):
            if self.overflow:
                dist.barrier(group=self.group)                             # reported

        def _flush(self):
            if self.overflow:
                dist.barrier(group=self.group)                             # reported

        def step(self, grads):
            self.overflow = False
            self.check(grads)
            self._settle()
            self._drop()
            self._flush()

        def later(self):
            self._settle()

        def hand_out(self):
            dist.barrier(group=self.group)
            return self._drop

        def flush_first(self):
            self._flush()
            self.overflow = False
    """) == [27, 31, 35]


_KEPT = """
    import torch
    import torch.distributed as dist


    class Loop:
        def __init__(self, group, timer):
            self.group = group
            self.timer = timer
            self.hook = self._reset
            self.flag = False
            self.level = 0

        def load(self, folder):
            state = torch.load(f"{folder}/rank_{dist.get_rank()}.pt")
            self.flag = state["flag"]

        def _reset(self):
            self.flag = False

        def _log(self, t):
            print(t.sum())
"""


def test_a_field_set_first_by_one_call_stays_set_past_the_next():
    assert _lines(_KEPT + """
        def reset_then_log(self, t):
            self._reset()
            self._log(t)
            if self.flag:
                dist.all_reduce(t, group=self.group)
            self.flag = False
    """) == []


def test_a_named_read_of_self_with_a_default_hands_it_nowhere():
    assert _lines(_KEPT + """
        def _log_level(self, t):
            print(getattr(self, "level", 0), t.sum())

        def _call_named(self, t, name):
            getattr(self, name)()

        def set_then_log_level(self, t):
            self.flag = False
            self._log_level(t)
            if self.flag:
                dist.all_reduce(t, group=self.group)

        def set_then_call_named(self, t):
            self.flag = False
            self._call_named(t, "_reset")
            if self.flag:
                dist.all_reduce(t, group=self.group)                       # reported
    """) == [40]


def test_a_callable_handed_to_the_constructor_is_another_object():
    assert _lines(_KEPT + """
        def _timed(self, t):
            self.timer("step")

        def _hooked(self, t):
            self.hook()

        def set_then_timed(self, t):
            self.flag = False
            self._timed(t)
            if self.flag:
                dist.all_reduce(t, group=self.group)

        def set_then_hooked(self, t):
            self.flag = False
            self._hooked(t)
            if self.flag:
                dist.all_reduce(t, group=self.group)                       # reported
    """) == [40]
