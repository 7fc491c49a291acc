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


# The flag reset at the start of the step and then set by a check the step
# calls on itself, through a helper method, from a flag all-reduced over the
# data-parallel group (handed on by keyword to a method that reduces it over
# the model-parallel group too); a checkpoint's flag, this rank's own, is
# written on another path.  What the check writes is what the step reads.
CHECKED_OVERFLOW = """
    import torch
    import torch.distributed as dist


    class Optimizer:
        def __init__(self, group, mp_group, check_grads):
            self.group = group
            self.mp_group = mp_group
            self.check_grads = check_grads
            self.overflow = False

        def load(self, state_dicts):
            mine = state_dicts[dist.get_rank(self.group)]
            self.overflow = mine.get("overflow", self.overflow)

        def has_overflow(self, grads):
            flag = torch.zeros(1)
            for g in grads:
                flag += torch.isinf(g).any()
            dist.all_reduce(flag, op=dist.ReduceOp.MAX, group=self.group)
            self._mp_all_reduce(tensor=flag, op=dist.ReduceOp.MAX)
            return bool(flag[0].item())

        def _mp_all_reduce(self, tensor, op):
            if self.mp_group is not None:
                dist.all_reduce(tensor=tensor, op=op, group=self.mp_group)

        def _check_overflow(self, grads):
            self.overflow = self.has_overflow(grads)

        def check_overflow(self, grads):
            self._check_overflow(grads)

        def step(self, grads):
            self.overflow = False
            if self.check_grads:
                self.check_overflow(grads)
            print("checked")
            if self.overflow:
                return
            dist.all_reduce(grads[0], group=self.group)
"""


def test_what_a_called_method_writes_to_the_field_is_what_the_step_reads():
    assert _codes(CHECKED_OVERFLOW) == []


def test_a_called_method_writing_a_rank_local_value_still_differs():
    source = CHECKED_OVERFLOW.replace("            dist.all_reduce(flag, op=dist.ReduceOp.MAX, group=self.group)\n", "") \
        .replace("            self._mp_all_reduce(tensor=flag, op=dist.ReduceOp.MAX)\n", "")
    assert _codes(source) == [("CSL102", 40)]


def test_a_helper_calling_the_writer_on_some_ranks_only_still_differs():
    source = CHECKED_OVERFLOW.replace("            self._check_overflow(grads)\n",
                                      "            if dist.get_rank() == 0:\n                self._check_overflow(grads)\n")
    assert ("CSL102", 43) in _codes(source)


def test_a_helper_calling_another_method_on_some_ranks_only_adds_nothing():
    source = CHECKED_OVERFLOW.replace(
        "            self._check_overflow(grads)\n",
        "            self._check_overflow(grads)\n            if dist.get_rank() == 0:\n                self._report()\n"
    ) + "\n        def _report(self):\n            self.reported = True\n"
    assert _codes(source) == []


def test_a_helper_handing_self_on_reads_the_whole_table():
    source = CHECKED_OVERFLOW.replace("            self._check_overflow(grads)\n",
                                      "            self._check_overflow(grads)\n            print(self)\n")
    assert _codes(source) == [("CSL102", 43)]


def test_the_step_calling_the_check_on_some_ranks_only_still_differs():
    source = CHECKED_OVERFLOW.replace("            if self.check_grads:\n", "            if dist.get_rank() == 0:\n")
    assert ("CSL102", 42) in _codes(source)


def test_a_method_the_step_calls_on_some_ranks_counts_only_where_it_writes_the_field():
    source = CHECKED_OVERFLOW.replace('            print("checked")\n',
                                      '            if dist.get_rank() == 0:\n                self._report()\n') \
        + "\n        def _report(self):\n            self.reported = True\n"
    assert _codes(source) == []
    assert _codes(source.replace("self.reported = True", "self.overflow = True")) == [("CSL102", 43)]


# The step does not reset the flag itself: the helper it calls first thing
# does, before anything else, and then checks; the step sets it again
# later, so it reads what it holds from the dataflow.
SET_FIRST = """
    import torch
    import torch.distributed as dist


    class Optimizer:
        def __init__(self, group):
            self.group = group
            self.overflow = False

        def load(self, state_dicts):
            mine = state_dicts[dist.get_rank(self.group)]
            self.overflow = mine.get("overflow", self.overflow)

        def check_overflow(self, grads):
            flag = torch.zeros(1)
            for g in grads:
                flag += torch.isinf(g).any()
            dist.all_reduce(flag, op=dist.ReduceOp.MAX, group=self.group)
            self.overflow = bool(flag[0].item())

        def _check_and_update(self, grads):
            self.overflow = False
            if grads:
                self.check_overflow(grads)
            return self.overflow

        def step(self, grads, norm):
            self._check_and_update(grads)
            if not self.overflow:
                dist.all_reduce(grads[0], group=self.group)
                if norm is None:
                    self.overflow = True
"""


def test_a_method_that_sets_the_field_first_replaces_what_it_held():
    assert _codes(SET_FIRST) == []


def test_a_method_that_may_not_set_the_field_keeps_what_it_held():
    source = SET_FIRST.replace("            self.overflow = False\n            if grads:",
                               "            if grads:\n                self.overflow = False")
    assert _codes(source) == [("CSL101", 31)]


def test_a_method_called_only_on_some_paths_keeps_what_the_field_held():
    source = SET_FIRST.replace("            self._check_and_update(grads)\n",
                               "            if grads:\n                self._check_and_update(grads)\n")
    assert _codes(source) == [("CSL101", 32)]
