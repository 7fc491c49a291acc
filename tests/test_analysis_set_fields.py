"""A field a method sets and then reads itself holds what it set
(analysis/setfields.py): not every value the class ever writes to it."""

import textwrap

from cslint.api import check_source


def _codes(source, **kw):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source), **kw).findings]


# A gatherer's state is set from a flag every rank is given, and tested on
# the next line; elsewhere a rank-local rewrite of the same field (a build
# that may fail on this rank alone) does not reach that test.
LAZY_STATE = """
    import torch.distributed as dist


    class Gatherer:
        _PENDING = object()

        def __init__(self, enabled, group):
            self.group = group
            self.state = self._PENDING if enabled else None
            if self.state is self._PENDING:
                dist.barrier(group=self.group)

        def rebuild(self):
            if dist.get_rank() % 2:
                self.state = None
"""


def test_a_field_tested_right_after_the_method_set_it_reads_that_value():
    assert _codes(LAZY_STATE) == []


def test_a_field_set_on_one_arm_only_still_reads_the_tables():
    source = LAZY_STATE.replace("            self.state = self._PENDING if enabled else None\n",
                                "            if enabled:\n                self.state = self._PENDING\n")
    assert _codes(source) == [("CSL101", 13)]


def test_a_call_between_the_write_and_the_test_may_change_the_field():
    source = LAZY_STATE.replace("            if self.state is self._PENDING:\n",
                                "            self.rebuild()\n            if self.state is self._PENDING:\n")
    assert _codes(source) == [("CSL101", 13)]


def test_a_call_in_the_test_itself_may_change_the_field():
    source = LAZY_STATE.replace("if self.state is self._PENDING:", "if self.rebuild() or self.state is self._PENDING:")
    assert _codes(source) == [("CSL101", 12)]


def test_a_store_through_another_name_may_change_the_field():
    source = LAZY_STATE.replace("            if self.state is self._PENDING:\n",
                                "            other = self\n            other.state = dist.get_rank()\n"
                                "            if self.state is self._PENDING:\n")
    assert _codes(source) != []


def test_a_rank_local_value_the_method_set_still_differs():
    source = LAZY_STATE.replace("self._PENDING if enabled else None", "self._PENDING if dist.get_rank() else None")
    assert _codes(source) == [("CSL101", 12)]


# An optimizer's overflow flag: reset at the start of the step, then the
# step's own test; a checkpoint's flag, loaded from this rank's own file,
# is written on another path.
OVERFLOW = """
    import torch.distributed as dist


    class Optimizer:
        def __init__(self, group):
            self.group = group
            self.overflow = False

        def load(self, state_dicts):
            mine = state_dicts[dist.get_rank(self.group)]
            self.overflow = mine.get("overflow", self.overflow)

        def step(self, grads):
            self.overflow = False
            for g in grads:
                if g is None:
                    self.overflow = self.overflow or False
            if not self.overflow:
                dist.all_reduce(grads[0], group=self.group)
"""


def test_a_flag_reset_at_the_start_of_the_step_is_not_the_loaded_one():
    assert _codes(OVERFLOW) == []
    # the loaded value comes back where the step does not reset it first
    assert _codes(OVERFLOW.replace("            self.overflow = False\n            for g", "            for g")) \
        == [("CSL101", 19)]
