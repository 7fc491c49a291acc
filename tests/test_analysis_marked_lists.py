"""A list a rank marks its own entries in: ``marked = [0] * n``, then
``marked[i] = 1`` under a rank-local test, then the list handed to a helper
that agrees it (issue 14, object-taint-spread).

- ``[x] * n`` is a container (``containers._builds_container``): its truth is
  its length, ``n``, not what the marks hold;
- an index store into a list replaces an element, so the list is as long as
  before whoever stores (``lists.list_index_stores``); a binding counts
  against that only where it can reach the store -- one that ends before it,
  or one a loop holding both carries round -- so ``marked = agree(marked,
  group)`` after the marking loop leaves the stores what they are.

A binding that reaches the store from something else than a list (a lookup
that may be a dict, where a store adds a key on the ranks that store), and
a repeat count that is itself rank-local, still differ."""

import textwrap

from cslint.api import check_source


def _codes(source, **kw):
    return [(f.code, f.line) for f in check_source(textwrap.dedent(source), report="per-site", **kw).findings]


_HEAD = """
    import random
    from typing import List

    import torch
    import torch.distributed as dist


    def agree(flags: List[int], group) -> List[int]:
        if not flags or dist.get_world_size(group) == 1:
            return flags
        t = torch.tensor(flags, dtype=torch.int32)
        dist.all_reduce(t, op=dist.ReduceOp.MAX, group=group)
        return t.tolist()
"""


def test_marks_agreed_after_the_marking_loop_leave_the_list_as_long_as_before():
    # VALID: one mark per request on every rank; the helper's `not flags` exit reads the list's length, and the
    # agreed marks decide the barrier alike
    assert _codes(_HEAD + """
    def verify(reqs, group):
        marked = [0] * len(reqs)
        for i, req in enumerate(reqs):
            if random.random() < 0.5:
                marked[i] = 1
        marked = agree(marked, group)
        if not any(marked):
            return
        dist.barrier(group=group)
    """) == []


def test_the_truth_of_a_repeated_display_is_its_length():
    # VALID: `[0] * n` is empty where `reqs` is, whatever the marks are
    assert _codes(_HEAD + """
    def tested(reqs, group):
        marked = [0] * len(reqs)
        for i, req in enumerate(reqs):
            if random.random() < 0.5:
                marked[i] = 1
        if not marked:
            return
        dist.barrier(group=group)
    """) == []


def test_a_binding_that_reaches_the_store_from_a_lookup_still_differs():
    # INVALID: rebound round the loop to what a lookup returns, or before the loop: a store may add a key
    assert _codes(_HEAD + """
    def rebound_in_loop(reqs, group, table):
        marked = [0] * len(reqs)
        for i, req in enumerate(reqs):
            marked = table.get(req)
            if random.random() < 0.5:
                marked[i] = 1
        if not marked:
            return
        dist.barrier(group=group)


    def replaced(reqs, group, table):
        marked = [0] * len(reqs)
        marked = table.get("marks")
        for i, req in enumerate(reqs):
            if random.random() < 0.5:
                marked[i] = 1
        if not marked:
            return
        dist.barrier(group=group)
    """) == [("CSL102", 24), ("CSL102", 35)]


def test_a_repeat_count_that_differs_still_differs():
    # INVALID: as many marks as a draw says
    assert _codes(_HEAD + """
    def drawn(group):
        marked = [0] * random.randint(0, 2)
        if not marked:
            return
        dist.barrier(group=group)
    """) == [("CSL102", 20)]
