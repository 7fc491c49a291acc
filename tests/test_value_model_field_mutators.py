"""A method called on a field (``self.allocator.clear()``, ``self.pending.pop()``)
never rebinds the field.  Where it runs on some ranks only, how many elements
the field holds and which of them are where may differ -- a length -- but not
its kind, nor what a method of the object hands back (``self.allocator.
get_pool()``, an object of a class the analysis does not know).  Before, any
call named like a list mutator on a field wrote the field whole, so a type test
of it, or of what it hands back, read as differing.  Its length, its truth,
what a loop over it runs and a None test of what it hands back still differ."""

import textwrap

import pytest

from cslint.api import check_source

_SCHEDULER = """
    import torch.distributed as dist


    class PagedPool:
        pass


    class Allocator:
        def __init__(self, pool):
            self.pool = pool
            self.free = []

        def clear(self):
            self.free = []


    class Scheduler:
        def __init__(self, result, group):
            self.group = group
            self.allocator = result.allocator
            self.pending = []

        def flush(self):
            if dist.get_rank() == 0:
                self.allocator.clear()
                self.pending.clear()

        def sync(self):
            {READ}
                dist.barrier(group=self.group)
"""


def _codes(read, source=_SCHEDULER):
    return [f.code for f in check_source(textwrap.dedent(source.replace("{READ}", read))).findings]


@pytest.mark.parametrize("read", ["if isinstance(self.allocator, Allocator):",
                                  "if isinstance(self.allocator.get_pool(), PagedPool):",
                                  "if isinstance(self.pending, list):"])
def test_a_type_test_of_a_field_a_rank_mutates_is_alike(read):
    assert _codes(read) == []


@pytest.mark.parametrize("read, code", [("if len(self.pending) > 0:", "CSL101"), ("if self.pending:", "CSL101"),
                                        ("for p in self.pending:", "CSL103"),
                                        ("if self.allocator.get_pool() is None:", "CSL101")])
def test_its_length_and_what_it_hands_back_being_there_still_differ(read, code):
    assert _codes(read) == [code]


def test_what_a_mutator_adds_is_held_as_it_is():
    source = _SCHEDULER.replace("self.pending.clear()", "pass").replace(
        "def sync(self):", "def fill(self):\n            self.pending.extend([dist.get_rank()])\n\n"
        "        def sync(self):")
    assert _codes("if self.pending[0] == 0:", source) == ["CSL101"]


def test_a_field_rebound_under_the_rank_test_still_differs_in_kind():
    source = _SCHEDULER.replace("self.allocator.clear()", "self.allocator = None")
    assert _codes("if isinstance(self.allocator, Allocator):", source) == ["CSL101"]
