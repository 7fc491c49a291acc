"""A nested function's free variables hold what its enclosing function binds
(issue 14): a parameter named like a rank, read by a closure, is what the
enclosing function's callers pass, never this process's rank by its name
alone; a rank parameter's source is dropped wherever a call reaches its
function, also once a test or a structure is made from it."""

import textwrap

from cslint.api import check_source


def _lines(source):
    return sorted(f.line for f in check_source(textwrap.dedent(source), report="per-site").findings)


CLOSURE_OF_A_CALLED_HELPER = """
    import torch.distributed as dist

    _cache = None


    def get_workspace(world_size, rank, size):
        global _cache
        if _cache is not None:
            return _cache

        def _make(n):
            if n > 4 or rank > 100:
                return None
            return [n]

        _cache = _make(size)
        return _cache


    class Comm:
        def __init__(self, world_size, size):
            self.world_size = world_size
            self.size = size

        def step(self, t):
            ws = get_workspace(self.world_size, 0, self.size)
            if ws is None:
                return t
            dist.all_reduce(t)
            return t
"""


def test_closure_reads_the_enclosing_parameter_its_callers_pass():
    # INVALID: the only caller passes 0, the closure's `rank` is that parameter
    assert _lines(CLOSURE_OF_A_CALLED_HELPER) == []


STRUCTURE_FROM_A_PASSED_RANK = """
    import torch.distributed as dist


    def make(rank, size):
        if size > 4 or rank > 100:
            return None
        return [size]


    def step(t, size):
        ws = make(0, size)
        if ws is None:
            return t
        dist.all_reduce(t)
        return t
"""


def test_structure_made_from_a_passed_rank_parameter_is_the_callers_value():
    # INVALID: the None-ness the rank test makes is the caller's constant's
    assert _lines(STRUCTURE_FROM_A_PASSED_RANK) == []


ENTRY_POINT_CLOSURE = """
    import torch.distributed as dist


    def worker(rank, t):
        def leader():
            return rank == 0

        if leader():
            dist.all_reduce(t)        # reported: no call reaches worker, rank is this process's
"""

ENCLOSING_LOCAL = """
    import torch.distributed as dist


    def run(t):
        rank = dist.get_rank()

        def leader():
            return rank == 0

        if leader():
            dist.all_reduce(t)        # reported
"""

ENCLOSING_RANK_FROM_CALLER = """
    import torch.distributed as dist


    def make(rank, size):
        if size > 4 or rank > 100:
            return None
        return [size]


    def step(t, size):
        ws = make(dist.get_rank(), size)
        if ws is None:
            return t
        dist.all_reduce(t)            # reported: the caller passes its rank
        return t
"""


def test_rank_closures_still_reported():
    # VALID
    assert _lines(ENTRY_POINT_CLOSURE) == [10]
    assert _lines(ENCLOSING_LOCAL) == [12]
    assert _lines(ENCLOSING_RANK_FROM_CALLER) == [15]
