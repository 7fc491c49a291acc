"""A summarised function's call WITHOUT arguments under a test of its own
(``if dist.get_rank() == 0: self.refill()``) runs its callee only where the
test holds, as a call with arguments does: what the callee writes (a field
of ``self``, of a held object) is written on those ranks alone
(``SummaryWalk._calls`` keeps the site with the test as its implicit flow;
``demand.table_writes`` counts a pending summary's calls without arguments
among what it may hand calling conditions to).  The same call under a test
every rank agrees on, or on every rank, stays quiet."""

import textwrap

import pytest

from cslint.api import check_source

RANK_ONLY = {
    "method_on_self": """
        import torch.distributed as dist


        class Worker:
            def __init__(self):
                self.n = 0

            def helper(self):
                self.n = 1

            def setup(self):
                if dist.get_rank() == 0:
                    self.helper()

            def step(self, t):
                if self.n > 0:
                    dist.all_reduce(t)
    """,
    "method_of_a_held_object": """
        import torch.distributed as dist


        class Pool:
            def __init__(self):
                self.free = []

            def refill(self):
                self.free = [1, 2, 3]


        class Worker:
            def __init__(self):
                self.pool = Pool()

            def setup(self):
                if dist.get_rank() == 0:
                    self.pool.refill()

            def step(self, t):
                if self.pool.free:
                    dist.all_reduce(t)
    """,
    "flag_handed_through_a_parameter": """
        import torch.distributed as dist


        class Worker:
            def __init__(self):
                self.n = 0

            def helper(self):
                self.n = 1

            def setup(self, lead):
                if lead:
                    self.helper()

            def step(self, t):
                if self.n > 0:
                    dist.all_reduce(t)


        def main(t):
            w = Worker()
            w.setup(dist.get_rank() == 0)
            w.step(t)
    """,
    "early_exit_before_the_call": """
        import torch.distributed as dist


        class Worker:
            def __init__(self):
                self.n = 0

            def helper(self):
                self.n = 1

            def setup(self):
                if dist.get_rank() != 0:
                    return
                self.helper()

            def step(self, t):
                if self.n > 0:
                    dist.all_reduce(t)
    """,
}

ALIKE = {
    "under_an_agreed_flag": """
        import torch.distributed as dist


        class Worker:
            def __init__(self, enabled: bool):
                self.n = 0
                self.enabled = enabled

            def helper(self):
                self.n = 1

            def setup(self):
                if self.enabled:
                    self.helper()

            def step(self, t):
                if self.n > 0:
                    dist.all_reduce(t)
    """,
    "on_every_rank": """
        import torch.distributed as dist


        class Worker:
            def __init__(self):
                self.n = 0

            def helper(self):
                self.n = 1

            def setup(self):
                print(dist.get_rank())
                self.helper()

            def step(self, t):
                if self.n > 0:
                    dist.all_reduce(t)
    """,
}


def _lines(source: str) -> list:
    return sorted((f.code, f.line) for f in check_source(textwrap.dedent(source), report="per-site").findings)


def _line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(textwrap.dedent(source).splitlines(), 1) if text in line)


@pytest.mark.parametrize("name", sorted(RANK_ONLY))
def test_a_call_without_arguments_under_a_rank_test_writes_on_those_ranks_alone(name):
    source = RANK_ONLY[name]
    assert _lines(source) == [("CSL101", _line_of(source, "dist.all_reduce(t)"))]


@pytest.mark.parametrize("name", sorted(ALIKE))
def test_a_call_without_arguments_every_rank_makes_alike_stays_quiet(name):
    assert _lines(ALIKE[name]) == []
