"""The summary walk and an arm that leaves the function (issue 14: every step
of a chain must be true).  The summary walk lets a variable accumulate what
every branch assigns to it; an arm whose last statement returns or raises
hands none of its assignments to the statements after the test, so neither a
finding nor its chain may rest on them.  Each VALID shape sits beside an
INVALID one that must still be reported."""

import textwrap

from cslint.api import check_source


def _findings(source):
    return check_source(textwrap.dedent(source)).findings


def _codes(source):
    return [(f.code, f.line) for f in _findings(source)]


_SHAPE = """
    import torch.distributed as dist


    def log(value):
        print(value)


    class Machine:
        def validate(self, bad, ok):
            flag = False
            if bad:
                flag = dist.get_rank() == 0
                log(flag)
                EXIT
            self.ready = flag

        def step(self, t):
            if self.ready:
                dist.all_reduce(t)
"""


def test_valid_an_arm_that_returns_hands_nothing_on():
    assert _codes(_SHAPE.replace("EXIT", "return")) == []


def test_valid_an_arm_that_raises_hands_nothing_on():
    assert _codes(_SHAPE.replace("EXIT", "raise ValueError(flag)")) == []


def test_valid_an_else_arm_that_returns_hands_nothing_on():
    assert _codes(_SHAPE.replace("""            if bad:
                flag = dist.get_rank() == 0
                log(flag)
                EXIT""", """            if ok:
                log(ok)
            else:
                flag = dist.get_rank() == 0
                return""")) == []


def test_invalid_an_arm_that_falls_through_hands_its_value_on():
    assert _codes(_SHAPE.replace("EXIT", "log(ok)")) == [("CSL101", 20)]


def test_invalid_a_raise_caught_in_the_function_hands_its_value_to_the_handler():
    assert _codes(_SHAPE.replace("""            if bad:
                flag = dist.get_rank() == 0
                log(flag)
                EXIT
            self.ready = flag""", """            try:
                if bad:
                    flag = dist.get_rank() == 0
                    raise ValueError(flag)
            except ValueError:
                pass
            self.ready = flag""")) == [("CSL101", 22)]


def test_invalid_the_chain_cites_the_assignment_that_reaches():
    # two reads of the same source: the one in the returning arm cannot reach
    found = _findings("""
        import torch
        import torch.distributed as dist


        class Machine:
            def validate(self, bad):
                if bad:
                    device = torch.cuda.current_device()
                    print(device)
                    return
                if self.state == 2:
                    device = torch.cuda.current_device()
                    if device == self.suspicious:
                        self.again = True

            def step(self, t):
                if self.again:
                    dist.all_reduce(t)
    """)
    assert [(f.code, f.line) for f in found] == [("CSL101", 19)]
    assert found[0].chain[-1].line == 13
