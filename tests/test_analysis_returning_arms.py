"""An assignment that an ``if`` returning from the function makes and that the
rest of the function makes too, before any other return, is made whichever way
the test goes (cslint/analysis/arms.py assigned_past_return): the test does
not decide it, in the summary walk and in the dataflow alike."""

import textwrap

from cslint.api import check_source


def _codes(source):
    return sorted((f.code, f.line) for f in check_source(textwrap.dedent(source)).findings)


READER = """
    def step(self, t):
        self.finish(t)
        if self.pending is None:
            dist.all_reduce(t)
"""


def _ring(finish: str) -> str:
    return textwrap.dedent("""
        import torch.distributed as dist


        class Ring:
            def quiet(self):
                return dist.get_rank() == 0
    """) + textwrap.indent(textwrap.dedent(finish) + textwrap.dedent(READER), "    ")


def test_a_field_reset_on_both_sides_of_a_returning_test_does_not_differ():
    # VALID: finish() leaves pending None whichever way quiet() goes
    assert _codes(_ring("""
        def finish(self, t):
            if self.pending is None:
                return
            if not self.quiet():
                self.pending = None
                return
            self.rebuild()
            self.pending = None
    """)) == []


def test_the_same_in_a_function_that_reaches_a_collective_itself():
    # the dataflow's view: the gather is skipped by the returning test (CSL102),
    # the reset after it is not decided by it
    assert _codes(_ring("""
        def finish(self, t):
            if not self.quiet():
                self.pending = None
                return
            dist.all_gather_object([None], t)
            self.pending = None
    """)) == [("CSL102", 13)]


def test_a_different_value_on_the_other_side_still_differs():
    # INVALID: None on one side, 0 on the other
    assert ("CSL101", 19) in _codes(_ring("""
        def finish(self, t):
            if not self.quiet():
                self.pending = None
                return
            self.rebuild()
            self.pending = 0
    """))


def test_another_return_before_the_rest_assigns_still_differs():
    # INVALID: a rank that returns on busy keeps what pending held
    assert ("CSL101", 20) in _codes(_ring("""
        def finish(self, t):
            if not self.quiet():
                self.pending = None
                return
            if self.busy:
                return
            self.pending = None
    """))
